#!/usr/bin/env bash
# binsize.sh — the code (text symbols) of a built bootstrap binary per Go module, largest first.
#   bench/binsize.sh [BINARY]   (default bin/bootstrap; build it first with `make build`)
# The module of a symbol is the module of its package as `go list -deps ./cmd/bootstrap` reports it;
# the standard library (and its vendored golang.org/x copies) is "std". A binary built from an older
# tree is attributed by module path prefix (`go list -m all`).
set -euo pipefail
bin=${1:-bin/bootstrap}
cd "$(dirname "$0")/.."
mods=$(mktemp); trap 'rm -f "$mods"' EXIT
go list -deps -f '{{.ImportPath}} {{if .Module}}{{.Module.Path}}{{else}}std{{end}}' ./cmd/bootstrap >"$mods"
go list -m -f '{{.Path}} {{.Path}}' all >>"$mods" # packages of an older build: by module prefix
go tool nm -size "$bin" | awk -v mods="$mods" '
	BEGIN { while ((getline l < mods) > 0) { split(l, f, " "); mod[f[1]] = f[2] } }
	$3 == "T" || $3 == "t" {
		name = $4
		sub(/^(type:|go:itab\.\*?|go:)/, "", name)
		sub(/\[.*/, "", name)                        # generic instantiations
		slash = 0; for (i = length(name); i > 0; i--) if (substr(name, i, 1) == "/") { slash = i; break }
		dot = index(substr(name, slash + 1), ".")
		pkg = dot ? substr(name, 1, slash + dot - 1) : name
		gsub(/%2e/, ".", pkg)                        # the linker writes gopkg.in/yaml.v3 as yaml%2ev3
		m = "std"
		if (pkg in mod) m = mod[pkg]
		else if (index(pkg, ".") < index(pkg "/", "/") && pkg !~ /^vendor\//) {
			for (p = pkg; p != ""; sub(/\/[^\/]*$/, "", p)) { if (p in mod) { m = mod[p]; break } if (p !~ /\//) break }
		}
		if (m == "github.com/bootstrap-dev/bootstrap") m = m " (this repo)"
		size[m] += $2; total += $2
	}
	END {
		for (m in size) printf "%d\t%s\n", size[m], m
		printf "%d\ttotal\n", total > "/dev/stderr"
	}' 2>&1 | sort -rn | awk -F'\t' '
	$2 == "total" { total = $1; next } { row[++n] = $0 }
	END {
		printf "| module | code (KiB) | share |\n|---|---:|---:|\n"
		for (i = 1; i <= n; i++) { split(row[i], f, "\t"); printf "| %s | %d | %.1f %% |\n", f[2], f[1] / 1024, 100 * f[1] / total }
		printf "| **total** | %d | 100 %% |\n", total / 1024
	}'
echo
ls -l "$bin" | awk '{printf "file: %.1f MB (%d bytes)\n", $5 / 1e6, $5}'
