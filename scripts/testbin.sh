#!/usr/bin/env bash
# testbin.sh — builds the real kube-apiserver and etcd the integration tests run through envtest,
# and fetches the real CRDs (OpenShift, OLM, Argo CD) they install. Everything lands in a cache
# outside the checkout, keyed by versions:
#
#   $BOOTSTRAP_TESTBIN_ROOT/k8s-<v>_etcd-<v>/{kube-apiserver,etcd,crds/,versions.txt}
#
# Idempotent: when the binaries and CRDs are present it does nothing. Only the Go module proxy is
# used (no prebuilt downloads). Each server is built from a module that selects the project's
# module versions (server_module), into the go command's own module and build caches (lib.sh
# shared_caches), so what it shares with the project is compiled once.
#
# Prints the directory on stdout (point KUBEBUILDER_ASSETS at it, or let the tests find it).
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}   # k8s.io/kubernetes; staging modules map to v0.<minor>.<patch>
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}  # go.etcd.io/etcd/server/v3
OPENSHIFT_API=${OPENSHIFT_API:-v0.0.0-20260318185450-1f2fa3f09f4e}
OLM_API=${OLM_API:-v0.45.0}
ARGOCD=${ARGOCD:-v3.6.2}    # the Argo CD whose controllers scripts/argocd.sh builds (argocdtest.Version)
ROOT=${BOOTSTRAP_TESTBIN_ROOT:-/var/cache/bootstrap/testbin}
DIR="$ROOT/k8s-${K8S_VERSION#v}_etcd-${ETCD_VERSION#v}"
STAGING_VERSION="v0.${K8S_VERSION#v1.}"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log() { echo "$(ci_at)testbin: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# crds_versions is what crds/.complete records: CRDs of other versions are fetched again (seconds),
# the binaries are kept.
crds_versions() {
  printf 'github.com/openshift/api %s\ngithub.com/operator-framework/api %s\ngithub.com/argoproj/argo-cd/v3 %s\n' \
    "$OPENSHIFT_API" "$OLM_API" "$ARGOCD"
}
crds_complete() {
  [ -f "$DIR/crds/.complete" ] && [ "$(cat "$DIR/crds/.complete")" = "$(crds_versions)" ]
}
complete() {
  [ -x "$DIR/kube-apiserver" ] && [ -x "$DIR/etcd" ] && crds_complete
}

if complete; then echo "$DIR"; exit 0; fi

mkdir -p "$ROOT"
# One build at a time on a shared machine; a second caller waits and then finds the cache filled.
exec 9>"$ROOT/.lock"
if ! flock -n 9; then phase "another build holds $ROOT/.lock; waiting for it" flock 9; fi
if complete; then echo "$DIR"; exit 0; fi
if [ -x "$DIR/kube-apiserver" ] && [ -x "$DIR/etcd" ]; then
  log "fetching the CRDs again (the versions wanted changed) into $DIR/crds"
else
  log "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION once (about 8-25 minutes on 2 cores) into $DIR"
fi
mkdir -p "$DIR"

WORK=$(mktemp -d "$ROOT/.build.XXXXXX")
shared_caches
cleanup() {
  # Module cache files are read-only; make them writable before removing.
  chmod -R u+w "$WORK" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# download MODULE@VERSION -> prints the module's directory in the shared module cache.
download() {
  (cd "$WORK" && go mod download -json "$1") | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
}

# module_zip MODULE@VERSION -> prints the path of the module's zip in the shared module cache.
# Used for Argo CD: its go.mod needs Go 1.27, so the go command (GOTOOLCHAIN=local) downloads the
# zip but refuses to extract it; its CRD files are read from the zip instead.
module_zip() {
  { (cd "$WORK" && go mod download -json "$1") || true; } | sed -n 's/^\t"Zip": "\(.*\)",$/\1/p'
}

fetch_crds() {
  crds_complete && return 0
  local out="$DIR/crds.tmp" os olm argo
  rm -rf "$out"; mkdir -p "$out"
  os=$(download "github.com/openshift/api@$OPENSHIFT_API")
  olm=$(download "github.com/operator-framework/api@$OLM_API")
  argo=$(module_zip "github.com/argoproj/argo-cd/v3@$ARGOCD")
  [ -n "$os" ] && [ -n "$olm" ] && [ -n "$argo" ] || { log "go mod download of a CRD module failed"; exit 1; }
  # OpenShift: one file per CRD; where feature sets differ take the -Default variant.
  local f
  for f in \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagedigestmirrorsets.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_imagetagmirrorsets.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_10_config-operator_01_images.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_03_marketplace_01_operatorhubs.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusteroperators.crd.yaml \
    config/v1/zz_generated.crd-manifests/0000_00_cluster-version-operator_01_clusterversions-Default.crd.yaml \
    machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigs.crd.yaml \
    machineconfiguration/v1/zz_generated.crd-manifests/0000_80_machine-config_01_machineconfigpools-Default.crd.yaml \
    route/v1/zz_generated.crd-manifests/routes.crd.yaml; do
    install -m 0644 "$os/$f" "$out/openshift_$(basename "$f")"
  done
  for f in catalogsources clusterserviceversions installplans operatorgroups subscriptions; do
    install -m 0644 "$olm/crds/operators.coreos.com_$f.yaml" "$out/olm_$f.yaml"
  done
  for f in application applicationset appproject; do
    unzip -p "$argo" "github.com/argoproj/argo-cd/v3@$ARGOCD/manifests/crds/$f-crd.yaml" >"$out/argocd_$f.yaml"
    [ -s "$out/argocd_$f.yaml" ] || { log "$f-crd.yaml not in $argo"; exit 1; }
  done
  crds_versions >"$out/.complete"
  rm -rf "$DIR/crds"; mv "$out" "$DIR/crds"
  log "CRDs in $DIR/crds"
}

# project_modules prints the project's build list ("path version", the main module left out).
project_modules() {
  (cd "$HERE" && go list -m -f '{{if not .Main}}{{.Path}} {{.Version}}{{end}}' all)
}

# server_module DIR MODULE@VERSION PACKAGE writes DIR/go.mod: a module that requires the server's
# module and every module of the project's build list at the project's version (and the staging
# replaces k8s.io/kubernetes needs outside its repository), then tidies it. The packages the
# server shares with the project then have the same versions and flags (CGO_ENABLED=0 as the
# Makefile, no -trimpath) and are compiled once, into the go command's build cache the project's
# builds use too. Where the server needs a newer version than the project's, the newer one is
# built, and the log names it. (kube-apiserver and etcd are two modules: etcd v3.7.3 needs a newer
# golang.org/x/net than the project's, which in one module would make every k8s.io/* package that
# imports it a different build from the project's.)
server_module() {
  local m=$1 req=$2 pkg=$3 raised
  {
    echo "module bootstrap.test/testbin/$(basename "$m")"
    echo
    echo "go $(go env GOVERSION | sed 's/^go//')"
    echo
    echo "require ("
    echo "	${req%@*} ${req#*@}"
    awk -v skip="${req%@*}" '$1 != skip && $2 != "" { print "\t" $1 " " $2 }' "$WORK/project.mods"
    echo ")"
    echo
    # k8s.io/kubernetes replaces each staging module with ./staging/src/k8s.io/X; outside its own
    # repository those are the published k8s.io/X modules at the matching v0 version.
    sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/.*#replace \1 => \1 '"$STAGING_VERSION"'#p' "$KDIR/go.mod"
  } >"$m/go.mod"
  # -e: tidy also looks at the tests of the project's modules, some of which do not resolve here
  # (shown only when the build fails)
  (cd "$m" && go mod tidy -e >tidy.log 2>&1)
  raised=$(cd "$m" && go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' "$pkg" | sort -u |
    awk 'NR == FNR { v[$1] = $2; next } ($1 in v) && v[$1] != $2 { printf "%s%s %s (project %s)", sep, $1, $2, v[$1]; sep = ", " }' "$WORK/project.mods" -)
  log "$(basename "$m"): built with the project's module versions, but for: ${raised:-none}"
}

# build_servers builds kube-apiserver (in the project's build cache, after the project) and etcd.
build_servers() {
  [ -x "$DIR/kube-apiserver" ] && [ -x "$DIR/etcd" ] && return 0
  KDIR=$(download "k8s.io/kubernetes@$K8S_VERSION")
  [ -n "$KDIR" ] || { log "go mod download k8s.io/kubernetes@$K8S_VERSION failed"; exit 1; }
  project_modules >"$WORK/project.mods"
  mkdir -p "$WORK/kube-apiserver" "$WORK/etcd" "$WORK/bin"
  cat >"$WORK/kube-apiserver/tools.go" <<'GO'
//go:build tools

// Package tools pins the kube-apiserver command for `go build`.
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
GO
  cat >"$WORK/etcd/main.go" <<'GO'
// Command etcd is etcd's server entry point, built from the published module for tests.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  server_module "$WORK/kube-apiserver" "k8s.io/kubernetes@$K8S_VERSION" k8s.io/kubernetes/cmd/kube-apiserver
  server_module "$WORK/etcd" "go.etcd.io/etcd/server/v3@$ETCD_VERSION" .
  local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
  done
  (cd "$WORK/kube-apiserver" && go build -ldflags "$ld" -o "$WORK/bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver) ||
    { cat "$WORK/kube-apiserver/tidy.log" >&2; exit 1; }
  (cd "$WORK/etcd" && go build -ldflags '-s -w' -o "$WORK/bin/etcd" .) || { cat "$WORK/etcd/tidy.log" >&2; exit 1; }
  local b
  for b in kube-apiserver etcd; do mv "$WORK/bin/$b" "$DIR/$b.tmp" && mv "$DIR/$b.tmp" "$DIR/$b"; done
  log "built: $("$DIR/kube-apiserver" --version); $("$DIR/etcd" --version | head -1)"
}

start=$(date +%s)
phase "fetching the CRDs (openshift/api, operator-framework/api, argo-cd)" fetch_crds
phase "building kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION" build_servers
printf 'k8s.io/kubernetes %s\ngo.etcd.io/etcd/server/v3 %s\n' "$K8S_VERSION" "$ETCD_VERSION" >"$DIR/versions.txt"
log "done in $(( $(date +%s) - start ))s; $(du -sh "$DIR" | cut -f1) in $DIR"
echo "$DIR"
