# shellcheck shell=bash
# Runs the Swift test suite once. No test is ever run twice: a failure is a bug, fixed at its
# cause (a figure a loaded machine bends is measured against a gross budget instead:
# Tests/TestSupport/MeasurementReport.swift).
#
#   run_suite LOG [swift test options...]
#
# Appends the runner's output to LOG (- to show it). Sets suite_status (the runner's status),
# suite_total, suite_skipped, suite_errors and suite_integration (from the xUnit report), and
# suite_failed (the names failing, one per line). A run that takes over 20 minutes is
# stopped: a hung test must fail CI, not hold it to its limit.
#
# The runner is `swift test` with the options given; a caller that sets suite_runner (an
# array: the built test binary and its own options, as inside scripts/server-root's root,
# which has no compiler) runs that instead, with the same --filter and --xunit-output.
# suite_filter, if set, limits the run to the tests it matches; suite_skip, if set, leaves out
# the tests it matches.

# One run of the tests matching $1 (all when empty), with the options in suite_options.
suite_run_once() {
  set +e
  local runner=(swift test "${suite_options[@]}")
  [[ -n "${suite_runner+set}" ]] && runner=("${suite_runner[@]}")
  timeout 1200 "${runner[@]}" ${1:+--filter "$1"} ${suite_skip:+--skip "$suite_skip"} --xunit-output "$suite_results/xunit.xml" 2>&1 \
    | grep -v "prohibited flag" | if [[ $suite_log == - ]]; then cat; else cat >>"$suite_log"; fi
  suite_status=${PIPESTATUS[0]}
  set -e
  read -r suite_last_total _ suite_last_skipped suite_last_errors suite_last_integration \
    < <(scripts/xunit-summary "$suite_results/xunit.xml" --failed "$suite_results/failed")
  suite_failed=$(sort -u "$suite_results/failed" | grep . || true)
}

run_suite() {
  suite_log=$1
  shift
  suite_options=("$@")
  suite_results=$(mktemp -d)
  suite_run_once "${suite_filter:-}"
  suite_total=$suite_last_total suite_skipped=$suite_last_skipped
  suite_errors=$suite_last_errors suite_integration=$suite_last_integration
  rm -rf "$suite_results"
}

# The servers the rigs run, "PipeWire 0.3.65, WirePlumber 0.4.13, PulseAudio 16.1".
suite_servers() {
  echo "$(pipewire --version | sed -n 's/^Linked with libpipewire /PipeWire /p'), \
WirePlumber $(wireplumber --version | sed -n 's/^Linked with libwireplumber //p'), \
$(pulseaudio --version | sed 's/^pulseaudio /PulseAudio /')"
}

# After run_suite: exits non-zero with a line saying why, unless every test passed (some
# against a real server, none skipped), or prints the counts, with the servers they ran
# against. $1 names the run.
suite_verdict() {
  local failed
  failed=$(grep -c . <<<"$suite_failed" || true)
  if [[ $suite_status -ne 0 || $suite_total -eq 0 || $failed -ne 0 || $suite_errors -ne 0 || $suite_skipped -ne 0 || $suite_integration -eq 0 ]]; then
    echo "$1: FAILED (runner status $suite_status; $suite_total tests, $failed failed, $suite_errors errors, $suite_skipped skipped, $suite_integration integration)"
    exit 1
  fi
  echo "($suite_integration of them against a real audio server)"
  echo "tests: $suite_total passed, 0 failed ($(suite_servers))"
}
