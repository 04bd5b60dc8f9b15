#!/usr/bin/env bash
# ISO stage benchmarks (internal/agentiso/bench_test.go) on a 1.2 GB sparse base ISO:
#   BenchmarkPrepare64Nodes  - our per-node views for 64 nodes: ms/node, disk-B/node, mem-B/node
#   BenchmarkNaiveCopyEmbed  - the naive way (copy the ISO + embed, like `coreos-installer iso customize -o`)
#   BenchmarkServe16Readers  - 16 concurrent Range readers over loopback HTTP vs `cat` of the file
# Needs xorriso, xz, cpio (scripts/install-deps.sh) and ~2.5 GB free in $TMPDIR.
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run '^$' -bench 'Prepare64Nodes|NaiveCopyEmbed|Serve16Readers' -benchtime "${BENCHTIME:-3x}" ./internal/agentiso/
