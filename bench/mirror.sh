#!/usr/bin/env bash
# `bootstrap mirror` in the shared mirror benchmark (../shared/bench/mirror/run.sh), side by side
# with cp, skopeo and regctl on the same content. Builds bin/bootstrap first.
#
#   bench/mirror.sh                                             # smoke: 300 MiB, 12 images, 1 round
#   TOTAL=3GiB IMAGES=60 REPS=3 TOOLS="cp skopeo-p4 skopeo-sync regctl-p4" bench/mirror.sh
#
# Environment: everything run.sh reads (TOTAL, IMAGES, REPS, TOOLS, DST_TLS, ...), plus
# HARNESS (path to run.sh) and BOOTSTRAP_PARALLEL (--parallel, default: the tool's own, 12).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HARNESS=${HARNESS:-$ROOT/../shared/bench/mirror/run.sh}
[ -x "$HARNESS" ] || HARNESS=/work/shared/bench/mirror/run.sh
export MB_WORK=${MB_WORK:-/tmp/mirrorbench}
mkdir -p "$MB_WORK/bin"

# Build bootstrap. If no file of cmd/bootstrap registers the mirror command yet, an overlay of
# root.go adds it, so the benchmark also runs on a branch where only cmd/bootstrap/mirror.go exists.
args=()
if ! grep -qs 'newMirrorCmd()' $(ls "$ROOT"/cmd/bootstrap/*.go | grep -v '/mirror\(_test\)\?\.go$'); then
  sed 's/\treturn root$/\troot.AddCommand(newMirrorCmd())\n\treturn root/' "$ROOT/cmd/bootstrap/root.go" >"$MB_WORK/root.go"
  printf '{"Replace":{"%s":"%s"}}' "$ROOT/cmd/bootstrap/root.go" "$MB_WORK/root.go" >"$MB_WORK/overlay.json"
  args=(-overlay "$MB_WORK/overlay.json")
fi
(cd "$ROOT" && go build "${args[@]}" -o "$MB_WORK/bin/bootstrap" ./cmd/bootstrap)

# The tool command: an ImageSetConfiguration listing every source image as an additional image,
# mirrored to docker://$MB_DST (same repository paths, no namespace).
# The harness empties the destination (and skopeo's blob cache) before every full run; the
# workspace's repositories log describes the destination it deleted, so it goes too (a stale log
# only costs HEADs, see README "Existence checks").
read -r -d '' CMD <<'SH' || true
rm -f "$MB_WORK/bootstrap-ws/working-dir/repositories.log"
isc=$MB_WORK/bootstrap-isc.yaml
{ echo "apiVersion: mirror.openshift.io/v2alpha1"; echo "kind: ImageSetConfiguration"; echo "mirror:"
  echo "  additionalImages:"; sed 's/^/  - name: /' "$MB_LIST"; } >"$isc"
extra=()
if [ "$MB_DST_TLS" = 1 ]; then
  printf '{"auths":{"%s":{"auth":"%s"}}}' "$MB_DST" "$(printf '%s:%s' "$MB_DST_USER" "$MB_DST_PASS" | base64 -w0)" >"$MB_WORK/bootstrap-auth.json"
  extra=(--ca-file "$MB_DST_CA" --authfile "$MB_WORK/bootstrap-auth.json")
else
  extra=(--dest-tls-verify=false)
fi
bootstrap mirror -c "$isc" --src-tls-verify=false "${extra[@]}" --parallel "${BOOTSTRAP_PARALLEL:-12}" \
  --workspace "file://$MB_WORK/bootstrap-ws" "docker://$MB_DST"
SH
export BOOTSTRAP_PARALLEL=${BOOTSTRAP_PARALLEL:-12}
export TOTAL=${TOTAL:-300MiB} IMAGES=${IMAGES:-12} REPS=${REPS:-1} TOOLS=${TOOLS:-"cp skopeo-p4 regctl-p4"}
TOOL_NAME=bootstrap TOOL_CMD="$CMD" exec "$HARNESS"
