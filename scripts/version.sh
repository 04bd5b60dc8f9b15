#!/usr/bin/env bash
# version.sh — the -ldflags -X settings `make build` stamps into bin/bootstrap: main.version as
# the go command itself stamps a main module built in a VCS checkout (go 1.24+, `go version -m`),
# main.commit and main.commitTime. The version is the v* tag on HEAD, else a pseudo-version
# (vX.Y.(Z+1)-0.<UTC commit time>-<12 hex> after the latest tag, v0.0.0-<time>-<12 hex> without
# one), with +dirty when the work tree has uncommitted changes. Outside a Git checkout it prints
# nothing and the binary falls back to what `go build` recorded.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
git rev-parse --git-dir >/dev/null 2>&1 || exit 0
commit=$(git rev-parse HEAD)
when=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
iso=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
if v=$(git describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
  :
elif t=$(git describe --tags --abbrev=0 --match 'v[0-9]*.[0-9]*.[0-9]*' HEAD 2>/dev/null); then
  base=${t%%[-+]*}
  v="${base%.*}.$(( ${base##*.} + 1 ))-0.$when-${commit:0:12}"
else
  v="v0.0.0-$when-${commit:0:12}"
fi
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then v+="+dirty"; fi
printf -- '-X main.version=%s -X main.commit=%s -X main.commitTime=%s\n' "$v" "$commit" "$iso"
