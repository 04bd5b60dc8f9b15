#!/usr/bin/env bash
# The sneakernet path in the shared mirror benchmark (../shared/bench/mirror/run.sh): to disk on the
# connected side, then from disk into the destination, as one tool command whose two legs are
# timed separately (MB_WORK/sneakernet-legs.csv: tool, leg, seconds, bytes on disk). Run it once
# per tool (the harness adds one custom tool per run; its cp column normalises the rounds):
#
#   bench/sneakernet.sh                        # bootstrap: file:// with archive parts, then --from
#   SNEAKER=skopeo bench/sneakernet.sh         # skopeo sync to a directory and back
#
# Environment: everything run.sh reads (TOTAL, IMAGES, REPS, TOOLS, DST_TLS, ...), plus HARNESS,
# SNEAKER (bootstrap or skopeo) and ARCHIVE_BYTES (bootstrap's part size, default 1 GiB).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=${HARNESS:-$ROOT/../shared/bench/mirror/run.sh}
[ -x "$HARNESS" ] || HARNESS=/work/shared/bench/mirror/run.sh
export MB_WORK=${MB_WORK:-/tmp/mirrorbench}
export SNEAKER=${SNEAKER:-bootstrap} ARCHIVE_BYTES=${ARCHIVE_BYTES:-1073741824}
mkdir -p "$MB_WORK/bin"
(cd "$ROOT" && go build -o "$MB_WORK/bin/bootstrap" ./cmd/bootstrap)

# Every full run starts from an empty disk (the harness empties the destination); a re-run (into
# the filled destination) keeps the disk, as a second sneakernet run would.
read -r -d '' CMD <<'SH' || true
leg() { # leg NAME COMMAND...: run and record its wall time and the disk's size
  local t0 t1; t0=$(date +%s.%N); "${@:2}"; t1=$(date +%s.%N)
  echo "$SNEAKER,$1,$(echo "$t1 - $t0" | bc),$(du -sb "$disk" | cut -f1)" >>"$MB_WORK/sneakernet-legs.csv"
}
disk=$MB_WORK/sneakernet-disk
[ -n "$(ls -A "$MB_WORK/dst/storage" 2>/dev/null)" ] || rm -rf "$disk"
mkdir -p "$disk"
if [ "$SNEAKER" = skopeo ]; then
  to() { for y in "$MB_WORK"/sync/*.yml; do n=$(basename "$y" .yml); skopeo sync --all --src-tls-verify=false --src yaml --dest dir "$y" "$disk/$n" >/dev/null || return 1; done; }
  from() { for d in "$disk"/*/; do n=$(basename "$d"); skopeo sync --all --dest-tls-verify=false $SKD --src dir --dest docker "$d" "$MB_DST/$n" >/dev/null || return 1; done; }
  SKD=""; [ "$MB_DST_TLS" = 1 ] && SKD="--dest-creds $MB_DST_USER:$MB_DST_PASS"
  leg to to && leg from from
else
  rm -f "$MB_WORK/bootstrap-ws/working-dir/repositories.log"
  isc=$MB_WORK/bootstrap-isc.yaml
  { echo "apiVersion: mirror.openshift.io/v2alpha1"; echo "kind: ImageSetConfiguration"; echo "mirror:"
    echo "  additionalImages:"; sed 's/^/  - name: /' "$MB_LIST"; } >"$isc"
  extra=(--dest-tls-verify=false)
  if [ "$MB_DST_TLS" = 1 ]; then
    printf '{"auths":{"%s":{"auth":"%s"}}}' "$MB_DST" "$(printf '%s:%s' "$MB_DST_USER" "$MB_DST_PASS" | base64 -w0)" >"$MB_WORK/bootstrap-auth.json"
    extra=(--ca-file "$MB_DST_CA" --authfile "$MB_WORK/bootstrap-auth.json")
  fi
  leg to bootstrap mirror -c "$isc" --src-tls-verify=false --archive-size-bytes "$ARCHIVE_BYTES" \
    --workspace "file://$MB_WORK/bootstrap-ws" "file://$disk/usb"
  leg from bootstrap mirror -c "$isc" --from "file://$disk/usb" "${extra[@]}" \
    --workspace "file://$MB_WORK/bootstrap-ws" "docker://$MB_DST"
fi
SH
export TOTAL=${TOTAL:-300MiB} IMAGES=${IMAGES:-12} REPS=${REPS:-1} TOOLS=${TOOLS:-"cp"}
rm -f "$MB_WORK/sneakernet-legs.csv"
PATH=$MB_WORK/bin:$PATH TOOL_NAME=sneakernet-$SNEAKER TOOL_CMD="$CMD" "$HARNESS"
echo "legs (tool,leg,seconds,bytes on disk):" >&2
cat "$MB_WORK/sneakernet-legs.csv" >&2
