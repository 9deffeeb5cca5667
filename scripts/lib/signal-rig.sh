# Sourced by the scripts that capture the bench signal (bench-compare, bench-apps, profile-cpu,
# check-rss, order-functions): a private headless PipeWire with pipewire-pulse
# (scripts/audio-rig), its environment exported, and the signal they play into its default
# sink: a 1 kHz tone at -12 dBFS mixed with white noise (so the encoder
# works), 48 kHz stereo, in $work/signal.wav.
#
#   start_signal_rig SECONDS     sets `work` (a fresh directory) and `rig`; stops the rig,
#                                and the player whose pid is in `player`, on exit
#                                (scripts/lib/cleanup.sh must be sourced first)
start_signal_rig() {
  work=$(mktemp -d /tmp/deskaudio-signal-rig.XXXXXX)
  rig="$work/rig"
  player=""
  on_exit 'stop_process "$player"; scripts/audio-rig stop "$rig" >/dev/null 2>&1'
  scripts/audio-rig start "$rig" pipewire >/dev/null
  # shellcheck disable=SC1091
  source "$rig/env"
  sox -q -n -r 48000 -c 2 -b 16 "$work/tone.wav" synth "$1" sine 1000 vol 0.25
  sox -q -n -r 48000 -c 2 -b 16 "$work/noise.wav" synth "$1" whitenoise vol 0.05
  sox -q -m "$work/tone.wav" "$work/noise.wav" "$work/signal.wav"
}

# play_signal: plays $work/signal.wav into the rig's default sink in the background (its pid in
# `player`, which start_signal_rig's clean-up stops), and gives it a second to reach the sink.
play_signal() {
  paplay "$work/signal.wav" &
  player=$!
  sleep 1
}

# valgrind_library: a copy of the installed libdeskaudio.so (the file and its links) in
# $work/lib without debug info, which valgrind cannot read from the Swift toolchain's objects.
# Run a host under valgrind with LD_LIBRARY_PATH="$work/lib".
valgrind_library() {
  mkdir -p "$work/lib"
  cp -P .build/install/lib/libdeskaudio.so* "$work/lib/"
  strip --strip-debug "$(readlink -f "$work/lib/libdeskaudio.so")"
}
