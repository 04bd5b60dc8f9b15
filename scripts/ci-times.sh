#!/usr/bin/env bash
# ci-times.sh LOG — the time line of a .ci/run log, as the README's first-run table: each step the
# scripts and make announce ("LABEL ..." when it starts, "LABEL: done in 4m12s" when it ends), with
# its start and end since CI began (the "[+12m05s]" every log line carries in CI, lib.sh ci_at) and
# its own duration, in the order the steps ended; then /usr/bin/time -v's totals when the log has
# them. Steps overlap, so the durations do not add up to the total. Nothing here is typed by hand:
#
#   CI=true /usr/bin/time -v bash .ci/run 2>&1 | tee ci.log; scripts/ci-times.sh ci.log
set -euo pipefail
[ $# -eq 1 ] && [ -r "$1" ] || { echo "usage: scripts/ci-times.sh CI-LOG" >&2; exit 2; }

awk '
function secs(m, s) { return m * 60 + s }
function fmt(t) { return sprintf("+%dm%02ds", int(t / 60), t % 60) }
/^\[\+[0-9]+m[0-9]+s\] / {
  split(substr($1, 3), a, "m"); t = secs(a[1], a[2] + 0)
  line = substr($0, length($1) + 2)
  tool = line; sub(/:.*/, "", tool)
  if (!(tool in first)) first[tool] = t
  if (line ~ / \.\.\.$/) { label = substr(line, 1, length(line) - 4); if (!(label in start)) start[label] = t; next }
  if (line ~ /: (done|built) in /) {
    label = line; sub(/: (done|built) in .*/, "", label)
    took = line; sub(/.*: (done|built) in /, "", took); sub(/[;:,].*/, "", took)
    # a tool script`s own last line ("testbin: done in 711s") starts where its first line did
    s = (label in start) ? start[label] : first[tool]
    delete start[label] # a step run twice (make build by two targets) starts anew
    n++; row[n] = sprintf("| %s | %s | %s | %s |", label, fmt(s), fmt(t), took)
  }
  next
}
/Elapsed \(wall clock\)/ { wall = $NF }
/User time \(seconds\)/ { user = $NF }
/System time \(seconds\)/ { sys = $NF }
/Percent of CPU this job got/ { cpu = $NF }
/Maximum resident set size/ { rss = $NF }
END {
  if (n == 0) { print "no stamped step lines (was the log from .ci/run, which sets BOOTSTRAP_CI_START?)" > "/dev/stderr"; exit 1 }
  print "| step | started | ended | took |"
  print "|---|---|---|---|"
  for (i = 1; i <= n; i++) print row[i]
  if (wall != "") printf("\ntotal %s wall, %s s user + %s s system CPU (%s), peak RSS %.1f GB\n", wall, user, sys, cpu, rss / 1048576)
}
' "$1"
