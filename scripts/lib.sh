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

# shared_caches: the cached tool builds (testbin, opm, installercheck) use the go command's own
# module cache and build cache (`go env GOMODCACHE`, `go env GOCACHE`, or $BOOTSTRAP_TOOL_GOMODCACHE
# and $BOOTSTRAP_TOOL_GOCACHE), which the project's builds fill too, with the same flags
# (CGO_ENABLED=0, no -trimpath): a module two of them need is fetched and extracted once, and a
# package they build at the same version with the same dependencies (the standard library; k8s.io/*
# for kube-apiserver and the project, see testbin.sh) is compiled once. The go command trims its
# build cache of what it has not used for five days; `go clean -cache -modcache` empties both.
shared_caches() {
  GOMODCACHE=${BOOTSTRAP_TOOL_GOMODCACHE:-$(go env GOMODCACHE)}
  GOCACHE=${BOOTSTRAP_TOOL_GOCACHE:-$(go env GOCACHE)}
  export GOMODCACHE GOCACHE
}

# shared_modcache: the module cache only (argocd.sh: Go 1.27's compiler shares no build with the
# project's Go, so its build cache stays private and is removed after the build).
shared_modcache() {
  GOMODCACHE=${BOOTSTRAP_TOOL_GOMODCACHE:-$(go env GOMODCACHE)}
  export GOMODCACHE
}
