#!/usr/bin/env bash
# Runs every fuzz target of the hostile-input readers for FUZZTIME each (default 60s), one after
# the other (go test -fuzz takes one target at a time), and prints each one's execs and corpus.
# `make test` runs the same targets on their seed corpus (plain go test); `make fuzz` runs this.
set -euo pipefail
FUZZTIME=${FUZZTIME:-60s}
targets=(
	"./internal/mirror/tarpart FuzzExtract" # the archive reader (a carried part; a leaf package, so it starts fast)
	"./internal/mirror FuzzLoadISC"       # the ImageSetConfiguration decoder
	"./internal/pipeline FuzzJournalRead" # the journal reader
	"./internal/pipeline FuzzJournalPass"
	"./internal/site FuzzLoad"            # the site profile decoder
)
for t in "${targets[@]}"; do
	set -- $t
	echo "== $2 ($1) for $FUZZTIME"
	go test -run '^$' -fuzz="^$2\$" -fuzztime="$FUZZTIME" "$1" 2>&1 | grep -E 'elapsed|^(ok|FAIL|---)|panic' | tail -3
	corpus=$( (ls "$(go env GOCACHE)/fuzz/github.com/bootstrap-dev/bootstrap/${1#./}/$2" 2>/dev/null || true) | wc -l)
	echo "   cached corpus: $corpus entries"
done
