#!/usr/bin/env bash
# opm.sh — builds the real opm (operator-framework/operator-registry) that
# TestFilteredCatalogServesWithOPM runs our filtered catalogs through (`opm validate`, `opm serve`).
# The binary lands in a cache outside the checkout, keyed by version:
#
#   $BOOTSTRAP_OPM_ROOT/<version>/opm
#
# Idempotent: when the binary is there it does nothing. Only the Go module proxy is used. The
# binary is our own main with the three commands the tests and the benchmark run (serve, validate,
# render: 951 packages instead of cmd/opm's 1,108) and is built without cgo: opm links sqlite
# (go-sqlite3) for its old database catalogs, which none of the three needs for a directory of
# file-based catalogs. Cold, with an empty build cache: 103 s and 193 CPU-seconds, where cmd/opm
# with cgo took 173 s and 294 (2026-12-07, back to back). It uses the go command's module and
# build caches (lib.sh shared_caches). Prints the binary's path on stdout.
set -euo pipefail

OPM_VERSION=${OPM_VERSION:-v1.47.0}
ROOT=${BOOTSTRAP_OPM_ROOT:-/var/cache/bootstrap/opm}
BIN="$ROOT/$OPM_VERSION/opm"
export GOFLAGS=-buildvcs=false GOTOOLCHAIN=local CGO_ENABLED=0

log() { echo "$(ci_at)opm: $*" >&2; }
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
mkdir -p "$ROOT"
exec 9>"$ROOT/.lock"
if ! flock -n 9; then phase "another build holds $ROOT/.lock; waiting for it" flock 9; fi
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi

WORK=$(mktemp -d "$ROOT/.build.XXXXXX")
shared_caches
cleanup() { chmod -R u+w "$WORK" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT

start=$(date +%s)
log "building opm (serve, validate, render) from github.com/operator-framework/operator-registry@$OPM_VERSION (once)"
# A wrapper module, not `go install pkg@version`: the proxy here refuses version lists, which
# `go install` asks for (module deprecation).
mkdir -p "$WORK/w"
cd "$WORK/w"
go mod init bootstrap.test/opm >/dev/null 2>&1
cat >main.go <<'GO'
// Command opm is operator-registry's opm with the commands bootstrap's tests and benchmark run
// (serve, validate, render), built from the published module by scripts/opm.sh. The root keeps
// opm's persistent registry flags, which render reads.
package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/operator-framework/operator-registry/cmd/opm/render"
	"github.com/operator-framework/operator-registry/cmd/opm/serve"
	"github.com/operator-framework/operator-registry/cmd/opm/validate"
)

func main() {
	cmd := &cobra.Command{
		Use:   "opm",
		Short: "operator package manager (serve, validate and render only)",
		Args:  cobra.NoArgs,
		Run:   func(*cobra.Command, []string) {},
	}
	cmd.PersistentFlags().Bool("skip-tls", false, "deprecated: use --use-http and --skip-tls-verify")
	cmd.PersistentFlags().Bool("skip-tls-verify", false, "skip TLS certificate verification for container image registries while pulling bundles")
	cmd.PersistentFlags().Bool("use-http", false, "use plain HTTP for container image registries while pulling bundles")
	cmd.AddCommand(serve.NewCmd(), validate.NewCmd(), render.NewCmd(false))
	if err := cmd.Execute(); err != nil {
		os.Exit(1)
	}
}
GO
phase "downloading operator-registry@$OPM_VERSION and its modules" go get "github.com/operator-framework/operator-registry@$OPM_VERSION" >&2
phase "compiling opm" go build -mod=mod -ldflags '-s -w' -o "$WORK/bin/opm" . >&2
cd - >/dev/null
mkdir -p "$(dirname "$BIN")"
cp "$WORK/bin/opm" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
log "done in $(( $(date +%s) - start ))s: $BIN"
echo "$BIN"
