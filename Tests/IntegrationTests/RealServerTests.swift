import Foundation
import Testing

/// scripts/test-suite starts a private PipeWire (with WirePlumber and pipewire-pulse) and a
/// plain PulseAudio, and sets DESKAUDIO_TEST_RIG=1 (its verdict fails a run in which none ran).
let rigIsRunning = ProcessInfo.processInfo.environment["DESKAUDIO_TEST_RIG"] == "1"

/// Every test that uses the real servers, one at a time (nested suites inherit .serialized):
/// each suite is an `extension RealServerTests` in its own file.
@Suite(.serialized, .enabled(if: rigIsRunning, "needs the private PipeWire of scripts/test"))
struct RealServerTests {}
