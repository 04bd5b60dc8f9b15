#!/usr/bin/env bash
# installercheck.sh — runs internal/agentiso/installercheck (our golden install-config and
# agent-config decoded strictly into the OpenShift installer's own types and validated by its own
# code) from a cached, precompiled test binary, so `make test` can afford it.
#
# That module pulls in the installer's pkg/types (every cloud platform, ~540 modules): its cold
# build took 904 s (15 min) on the shared 2-core machine (up to ~50 min under heavier load). Its
# 210 MB test binary is built once per source state into
#
#   $BOOTSTRAP_INSTALLERCHECK_ROOT/<sha256 of go version, go.mod, go.sum, *.go>/installercheck.test
#
# with a private GOMODCACHE/GOCACHE that is removed afterwards (only the binary is kept; older
# binaries are removed). A second caller waits on a lock and then finds the binary. Progress goes
# to stderr; the test's own output to stdout. Exit status is the test's.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC="$HERE/internal/agentiso/installercheck"
ROOT=${BOOTSTRAP_INSTALLERCHECK_ROOT:-/var/cache/bootstrap/installercheck}
# The checksum database lacks these (replaced or pseudo-versioned forks); go.sum pins them.
export GONOSUMDB=${GONOSUMDB:-github.com/openshift/assisted-service,github.com/mboersma,github.com/openshift/machine-api-provider-gcp}
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

log() { echo "installercheck: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

key() {
  {
    go env GOVERSION
    cd "$SRC"
    for f in go.mod go.sum $(ls -- *.go | LC_ALL=C sort); do
      printf '%s\n' "$f"
      sha256sum <"$f"
    done
  } | sha256sum | cut -c1-16
}

KEY=$(key)
DIR="$ROOT/$KEY"
BIN="$DIR/installercheck.test"

build() {
  mkdir -p "$ROOT"
  exec 9>"$ROOT/.lock"
  if ! flock -n 9; then phase "another build holds $ROOT/.lock; waiting for it" flock 9; fi
  if [ -x "$BIN" ]; then exec 9>&-; return 0; fi
  local start
  work=$(mktemp -d "$ROOT/.build.XXXXXX")
  # Module cache files are read-only; make them writable before removing.
  cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
  trap cleanup EXIT
  start=$(date +%s)
  log "building the test binary (cold: ~15 minutes on 2 cores, longer under load) into $DIR"
  mkdir -p "$DIR"
  (cd "$SRC" && phase "compiling the installercheck test binary" \
    env GOMODCACHE="$work/mod" GOCACHE="$work/cache" go test -c -o "$work/installercheck.test" .)
  mv "$work/installercheck.test" "$BIN"
  # keep only the binary of the current sources
  local d
  for d in "$ROOT"/*/; do
    [ "${d%/}" = "$DIR" ] || rm -rf "${d%/}"
  done
  cleanup
  trap - EXIT
  exec 9>&-
  log "built in $(( $(date +%s) - start ))s: $(du -h "$BIN" | cut -f1) $BIN (build caches removed)"
}

[ -x "$BIN" ] || build
log "running $BIN"
cd "$SRC"
exec "$BIN" -test.count=1 "$@"
