#!/usr/bin/env bash
# argocd.sh — builds the real Argo CD (application-controller, repo-server, applicationset-controller:
# one binary that dispatches on the name it is called by) and the kustomize its repo-server runs, for
# the lab and the handoff integration tests. Everything lands in a cache outside the checkout, keyed
# by versions:
#
#   $BOOTSTRAP_ARGOCD_ROOT/<argocd-version>/{argocd,argocd-*,kustomize,git-verify-wrapper.sh,versions.txt}
#
# Idempotent: when the binaries are there it does nothing. Only the Go module proxy is used (no
# prebuilt downloads). Argo CD v3.6 needs Go 1.27, which the go command fetches from the proxy as the
# toolchain module go1.27.3 for this build only (the project itself stays on the machine's Go). The
# binary links only the four commands the tests run (our own main below, not Argo CD's cmd). The
# build uses the shared module cache (lib.sh shared_modcache) and a private GOCACHE that is removed
# afterwards; only the binaries are kept. Progress goes to stderr at least every 30 s; the
# directory is printed on stdout.
set -euo pipefail

ARGOCD_VERSION=${ARGOCD_VERSION:-v3.6.2}
KUSTOMIZE_VERSION=${KUSTOMIZE_VERSION:-v5.8.1} # the kustomize/api v0.21.1 that Argo CD v3.6.2 links
GO_TOOLCHAIN=${ARGOCD_GO_TOOLCHAIN:-go1.27.3}
ROOT=${BOOTSTRAP_ARGOCD_ROOT:-/var/cache/bootstrap/argocd}
DIR="$ROOT/$ARGOCD_VERSION"
# The names the one binary answers to (its main switches on its base name); the repo-server also
# runs argocd-git-ask-pass as git's askpass helper, so it must be on PATH beside the servers.
NAMES="argocd-application-controller argocd-repo-server argocd-applicationset-controller argocd-git-ask-pass"
export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0 GOTOOLCHAIN="$GO_TOOLCHAIN"

log() { echo "$(ci_at)argocd: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

built() { [ -x "$DIR/argocd" ] && [ -x "$DIR/kustomize" ] && [ -f "$DIR/versions.txt" ]; }
complete() { built && [ -x "$DIR/git-verify-wrapper.sh" ]; }

# The repo-server runs git-verify-wrapper.sh (from PATH) on every revision it checks out, to
# read the revision's GPG signature; Argo CD's image ships one. Ours keeps its contract: the
# output of git verify-tag (annotated tags) or git verify-commit, and exit 0 also when the
# revision is merely unsigned.
install_wrapper() {
  cat >"$DIR/git-verify-wrapper.sh.tmp" <<'EOF'
#!/bin/sh
# git-verify-wrapper.sh REVISION: the GPG verification output of a tag or commit (see scripts/argocd.sh).
[ -n "$1" ] || { echo "usage: git-verify-wrapper.sh REVISION" >&2; exit 1; }
if git describe --exact-match "$1" >/dev/null 2>&1; then kind=tag; else kind=commit; fi
out=$(git "verify-$kind" "$1" 2>&1)
rc=$?
case $rc in
0) printf '%s\n' "$out" ;;
1) # unsigned: not an error; verify-tag's "error: no signature found" is no output either
   if [ "$kind" = tag ] && [ "${out%%:*}" = error ]; then out=; fi
   printf '%s\n' "$out"; rc=0 ;;
*) printf '%s\n' "$out" >&2 ;;
esac
exit $rc
EOF
  chmod 0755 "$DIR/git-verify-wrapper.sh.tmp" && mv "$DIR/git-verify-wrapper.sh.tmp" "$DIR/git-verify-wrapper.sh"
}

if complete; then echo "$DIR"; exit 0; fi
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then log "another build holds $ROOT/.lock; waiting"; flock 9; fi
if complete; then echo "$DIR"; exit 0; fi
if built; then install_wrapper; echo "$DIR"; exit 0; fi

WORK=$(mktemp -d "$ROOT/.build.XXXXXX")
shared_modcache
export GOCACHE="$WORK/cache"
ticker=
cleanup() {
  [ -n "$ticker" ] && kill "$ticker" 2>/dev/null
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

start=$(date +%s)
# A progress line every 20 s while the go command is quiet (compiling ~690 modules prints nothing).
(
  while sleep 20; do
    log "still building: $(( $(date +%s) - start ))s, $(du -sm "$WORK" 2>/dev/null | cut -f1) MB of private caches"
  done
) &
ticker=$!

log "building github.com/argoproj/argo-cd/v3/cmd@$ARGOCD_VERSION and kustomize $KUSTOMIZE_VERSION with $GO_TOOLCHAIN (once; ~5 min on 2 quiet cores, much more under load)"
m="$WORK/w"
mkdir -p "$m"
# Argo CD's go.mod pins its Kubernetes libraries with a replace block; outside its repository the
# block must be repeated, less the line pointing gitops-engine at the checkout's own directory (the
# proxy serves gitops-engine/v3 at the same version).
(cd "$WORK" && GOTOOLCHAIN=local go mod download -json "github.com/argoproj/argo-cd/v3@$ARGOCD_VERSION" >/dev/null 2>&1 || true)
amod="$GOMODCACHE/cache/download/github.com/argoproj/argo-cd/v3/@v/$ARGOCD_VERSION.mod"
[ -f "$amod" ] || { log "could not download argo-cd's go.mod ($ARGOCD_VERSION) from the module proxy"; exit 1; }
{
  echo "module bootstrap.test/argocd"
  echo
  grep -m1 '^go ' "$amod"
  echo
  echo "require ("
  echo "	github.com/argoproj/argo-cd/v3 $ARGOCD_VERSION"
  echo "	sigs.k8s.io/kustomize/kustomize/v5 $KUSTOMIZE_VERSION"
  echo ")"
  echo
  # The multi-line replace block, then any single-line replaces, without local-path targets.
  sed -n '/^replace ($/,/^)$/p' "$amod" | grep -v '=> \.'
  sed -n 's#^replace \([^(].*=> [^.].*\)#replace \1#p' "$amod"
} >"$m/go.mod"
cat >"$m/tools.go" <<'EOF'
//go:build tools

// Package tools pins kustomize, which this module also builds.
package main

import _ "sigs.k8s.io/kustomize/kustomize/v5"
EOF
# Our own multi-call main for the four commands the tests run, instead of Argo CD's cmd (which
# also links the API server, the CLI, Dex, notifications and the plugin and commit servers).
cat >"$m/main.go" <<'EOF'
// Command argocd is the part of Argo CD the tests run: the application controller, the repo
// server, the ApplicationSet controller and the askpass helper the repo server hands git, chosen
// by the name it is called by (or ARGOCD_BINARY_NAME), as Argo CD's own multi-call binary does.
// Linking only these four leaves out the API server, the CLI, Dex, notifications and the plugin
// servers, which no test runs.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	appcontroller "github.com/argoproj/argo-cd/v3/cmd/argocd-application-controller/commands"
	applicationset "github.com/argoproj/argo-cd/v3/cmd/argocd-applicationset-controller/commands"
	gitaskpass "github.com/argoproj/argo-cd/v3/cmd/argocd-git-ask-pass/commands"
	reposerver "github.com/argoproj/argo-cd/v3/cmd/argocd-repo-server/commands"
	"github.com/argoproj/argo-cd/v3/common"
	"github.com/argoproj/argo-cd/v3/util/log"
)

func main() {
	// No grpc.DisableSRVLookups() as Argo CD's main has: the gRPC SRV lookups it turns off are
	// turned on by grpclb's init, which only the CLI and API server link; here it would panic.
	klog.SetLogger(log.NewLogrusLogger(log.NewWithCurrentConfig()))
	name := filepath.Base(os.Args[0])
	if v := os.Getenv("ARGOCD_BINARY_NAME"); v != "" {
		name = v
	}
	var cmd *cobra.Command
	switch name {
	case common.CommandApplicationController:
		cmd = appcontroller.NewCommand()
	case common.CommandRepoServer:
		cmd = reposerver.NewCommand()
	case common.CommandApplicationSetController:
		cmd = applicationset.NewCommand()
	case common.CommandGitAskPass:
		cmd = gitaskpass.NewCommand()
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
	default:
		fmt.Fprintf(os.Stderr, "%s: this build of Argo CD runs only as %s, %s, %s or %s\n", name,
			common.CommandApplicationController, common.CommandRepoServer, common.CommandApplicationSetController, common.CommandGitAskPass)
		os.Exit(2)
	}
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
EOF
log "wrapper: $(grep -c '=>' "$m/go.mod") replaces from argo-cd's go.mod"
ld="-s -w"
for k in version=${ARGOCD_VERSION#v} gitTreeState=clean buildDate=1970-01-01T00:00:00Z; do
  ld+=" -X github.com/argoproj/argo-cd/v3/common.$k"
done
(
  cd "$m"
  nice -n 10 go mod tidy -e
  nice -n 10 go build -trimpath -ldflags "$ld" -o "$WORK/argocd" .
  nice -n 10 go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kustomize/api/provenance.version=$KUSTOMIZE_VERSION" \
    -o "$WORK/kustomize" sigs.k8s.io/kustomize/kustomize/v5
) >&2
mkdir -p "$DIR"
for b in argocd kustomize; do cp "$WORK/$b" "$DIR/$b.tmp" && mv "$DIR/$b.tmp" "$DIR/$b"; done
for n in $NAMES; do ln -sfn argocd "$DIR/$n"; done
install_wrapper
printf 'github.com/argoproj/argo-cd/v3 %s\nsigs.k8s.io/kustomize/kustomize/v5 %s\ntoolchain %s\ncommands %s\n' \
  "$ARGOCD_VERSION" "$KUSTOMIZE_VERSION" "$GO_TOOLCHAIN" "$NAMES" >"$DIR/versions.txt"
log "done in $(( $(date +%s) - start ))s; $(du -shL "$DIR/argocd" | cut -f1) argocd, $(du -sh "$DIR/kustomize" | cut -f1) kustomize in $DIR (build caches removed)"
echo "$DIR"
