# Sourced by every script under scripts/ that starts something which must not outlive it
# (an audio rig, a player): the one place an EXIT trap is set.
#
#   on_exit 'COMMAND'    runs COMMAND (evaluated then, so it sees variables as they are at
#                        exit) when the script ends: on success, on failure, on Ctrl-C or
#                        SIGTERM. Clean-ups run last-registered first, each whatever the
#                        others did; one that fails is not an error: the script's exit
#                        status is always that of the work it cleans up after.
#   stop_process PID     kills PID and reaps it; one that has already finished is fine.
deskaudio_cleanups=()

on_exit() {
  deskaudio_cleanups+=("$1")
  trap deskaudio_run_cleanups EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

deskaudio_run_cleanups() {
  local status=$? index
  set +e
  for ((index = ${#deskaudio_cleanups[@]} - 1; index >= 0; index--)); do
    eval "${deskaudio_cleanups[index]}"
  done
  exit "$status"
}

stop_process() {
  [[ -n "${1:-}" ]] || return 0
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
