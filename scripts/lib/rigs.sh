# shellcheck shell=bash
# Sourced by the scripts that run tests against real servers (scripts/test-suite,
# scripts/test-sanitized, and scripts/test for its package and Rust steps): starts the two
# private rigs a test run uses, a PipeWire (with WirePlumber and pipewire-pulse) and a plain
# PulseAudio, and stops them when the script ends. Each run has rigs of its own, so runs can
# go at once without hearing each other.
#
#   start_rigs    starts both, in $rig and $pulse_rig; exports the PipeWire rig's
#                 environment (its env file: XDG_RUNTIME_DIR, PULSE_CLIENTCONFIG...) and
#                 DESKAUDIO_TEST_PULSE_RUNTIME_DIR, the PulseAudio rig's directory. Needs
#                 scripts/lib/cleanup.sh sourced.
start_rigs() {
  rig=$(mktemp -d /tmp/deskaudio-rig.XXXXXX)
  pulse_rig=$(mktemp -d /tmp/deskaudio-pulse-rig.XXXXXX)
  on_exit 'scripts/audio-rig check "$rig"; scripts/audio-rig check "$pulse_rig"; scripts/audio-rig stop "$rig"; scripts/audio-rig stop "$pulse_rig"'
  scripts/audio-rig start "$pulse_rig" pulseaudio
  scripts/audio-rig start "$rig" pipewire
  # shellcheck disable=SC1091
  source "$rig/env"
  export DESKAUDIO_TEST_PULSE_RUNTIME_DIR="$pulse_rig"
}
