#!/usr/bin/env bash
# phase.sh LABEL COMMAND [ARGS...] — runs COMMAND as one phase of a make target: a line when it
# starts, one every 30 s with the elapsed time while it runs (BOOTSTRAP_HEARTBEAT), one when it ends.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
log() { echo "$(ci_at)make: $*" >&2; }
phase "$@"
