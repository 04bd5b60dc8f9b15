#!/usr/bin/env bash
# opm.sh — builds the real opm (operator-framework/operator-registry) that
# TestFilteredCatalogServesWithOPM runs our filtered catalogs through (`opm validate`, `opm serve`).
# The binary lands in a cache outside the checkout, keyed by version:
#
#   $BOOTSTRAP_OPM_ROOT/<version>/opm
#
# Idempotent: when the binary is there it does nothing. Only the Go module proxy is used. The build
# uses the shared module cache (lib.sh shared_modcache) and a private GOCACHE that is removed
# afterwards (~20 CPU-minutes cold, cgo for sqlite); only the binary is kept. Prints the binary's path on stdout.
set -euo pipefail

OPM_VERSION=${OPM_VERSION:-v1.47.0}
ROOT=${BOOTSTRAP_OPM_ROOT:-/var/cache/bootstrap/opm}
BIN="$ROOT/$OPM_VERSION/opm"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local

log() { echo "$(ci_at)opm: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then phase "another build holds $ROOT/.lock; waiting for it" flock 9; fi
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi

WORK=$(mktemp -d "$ROOT/.build.XXXXXX")
shared_modcache
export GOCACHE="$WORK/cache" GOBIN="$WORK/bin"
cleanup() { chmod -R u+w "$WORK" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

start=$(date +%s)
log "building github.com/operator-framework/operator-registry/cmd/opm@$OPM_VERSION (once; ~20 min on 2 cores)"
# A wrapper module, not `go install pkg@version`: the proxy here refuses version lists, which
# `go install` asks for (module deprecation).
mkdir -p "$WORK/w"
cd "$WORK/w"
go mod init opmbuild >/dev/null 2>&1
phase "downloading operator-registry@$OPM_VERSION and its modules" go get "github.com/operator-framework/operator-registry@$OPM_VERSION" >&2
phase "compiling opm" go build -mod=mod -o "$WORK/bin/opm" github.com/operator-framework/operator-registry/cmd/opm >&2
cd - >/dev/null
mkdir -p "$(dirname "$BIN")"
cp "$WORK/bin/opm" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
log "done in $(( $(date +%s) - start ))s: $BIN"
echo "$BIN"
