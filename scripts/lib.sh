# lib.sh — sourced by the scripts: phase, a long step that is never silent.
#
#   phase LABEL COMMAND [ARGS...]
#
# logs "LABEL ...", runs COMMAND, logs "LABEL: still running, 2m30s" every $BOOTSTRAP_HEARTBEAT
# seconds (default 30) while it runs, then "LABEL: done in 4m12s" or "LABEL: failed after 10s
# (exit 2)". Returns COMMAND's status. The caller defines log() (a prefix and stderr).

# ci_at prints "[+12m05s] ", the time since .ci/run started (BOOTSTRAP_CI_START, epoch seconds),
# which every log line of the scripts carries in CI: overlapping steps can then be put on one time
# line (scripts/ci-times.sh). Outside CI it prints nothing.
ci_at() {
  [ -n "${BOOTSTRAP_CI_START:-}" ] || return 0
  local s=$(( $(date +%s) - BOOTSTRAP_CI_START ))
  printf '[+%dm%02ds] ' $(( s / 60 )) $(( s % 60 ))
}

elapsed() {
  local s=$(( SECONDS - $1 ))
  if [ "$s" -ge 60 ]; then printf '%dm%02ds' $(( s / 60 )) $(( s % 60 )); else printf '%ds' "$s"; fi
}

phase() {
  local label=$1 start=$SECONDS rc=0 hb
  shift
  log "$label ..."
  # The heartbeat's sleep holds no output descriptor, so a pipe (make | tee) closes when we end.
  (
    s=""
    trap '[ -n "$s" ] && kill "$s" 2>/dev/null; exit 0' TERM
    while :; do
      sleep "${BOOTSTRAP_HEARTBEAT:-30}" </dev/null >/dev/null 2>&1 &
      s=$!
      wait "$s"
      log "$label: still running, $(elapsed "$start")"
    done
  ) &
  hb=$!
  # In the background, not in an `||` list: `set -e` still applies inside COMMAND, and a function's
  # `exit` ends COMMAND only, never the heartbeat's owner.
  ( "$@" ) &
  wait "$!" || rc=$?
  kill "$hb" 2>/dev/null || true
  wait "$hb" 2>/dev/null || true
  if [ "$rc" -ne 0 ]; then
    log "$label: failed after $(elapsed "$start") (exit $rc)"
    return "$rc"
  fi
  log "$label: done in $(elapsed "$start")"
}

# shared_modcache: the cached tool builds (testbin, opm, argocd, installercheck) download into one
# module cache, the go command's own (`go env GOMODCACHE`, or $BOOTSTRAP_TOOL_GOMODCACHE), which
# the project's `go mod download` fills too: a module two of them need (k8s.io/*, the OpenShift
# API, controller-runtime) is fetched and extracted once. Their build caches stay private and are
# removed after each build (a few GB each); `go clean -modcache` empties the shared one.
shared_modcache() {
  GOMODCACHE=${BOOTSTRAP_TOOL_GOMODCACHE:-$(go env GOMODCACHE)}
  export GOMODCACHE
}
