import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

/// The runtime directory of scripts/test's second rig: a plain PulseAudio daemon at its
/// default s16le 44.1 kHz, no PipeWire.
let pulseRuntimeDirectory = ProcessInfo.processInfo.environment["DESKAUDIO_TEST_PULSE_RUNTIME_DIR"]

/// Runs `body` with this process (and the players it starts) pointed at the PulseAudio rig.
func withPlainPulseAudio(_ body: ([String: String]) throws -> Void) throws {
    let directory = try #require(pulseRuntimeDirectory, "scripts/test sets DESKAUDIO_TEST_PULSE_RUNTIME_DIR")
    let previous = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
    setenv("XDG_RUNTIME_DIR", directory, 1)
    defer {
        if let previous { setenv("XDG_RUNTIME_DIR", previous, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
    }
    try body(["XDG_RUNTIME_DIR": directory])
}

extension RealServerTests {
    /// Automatic backend choice against a server with no PipeWire: the PulseAudio backend,
    /// and the server converts its s16 44.1 kHz to our f32 48 kHz.
    @Suite struct PlainPulseAudioTests {
        @Test func appToneSurvivesTheConversionFrom44100HzS16() throws {
            try withPlainPulseAudio { environment in
                var backend = ""
                var tap: ToneCheck?
                let collector = try capture(mic: false, app: true) {
                    backend = String(cString: deskaudio_backend()!)
                    (_, tap) = try MonitorTap.recording(environment: environment) {
                        try ExternalTools.playTone(
                            frequency: 1000, amplitude: 0.5, seconds: 1.5, environment: environment
                        )
                        .waitUntilExit()
                    }
                }
                #expect(backend == "pulse", "auto picks PulseAudio where no PipeWire answers")
                let tone = ToneCheck(try collector.decoded())
                #expect(
                    (145...155).contains(tone.loudFrames.count), "1.5 s of tone: \(tone.loudFrames.count)")
                let sinkSilence = sinkSilenceBlocks(in: tone, playedSeconds: 1.5, frames: try collector.parsed().map(\.header))
                let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
                    tone, tap: tap, serverSkips: collector.serverSkips, sinkSilence: sinkSilence)
                print("measured: plain PulseAudio (s16 44.1 kHz) app: \(frequency) Hz, \(level) dBFS")
            }
        }

        @Test func micAloneCarriesItsToneAndNotTheAppAudio() throws {
            try withPlainPulseAudio { environment in
                let micOnly = ToneCheck(
                    try capture(mic: true, app: false) { try playMicAndAppTones(environment: environment) }
                        .decoded())
                let (alone, leak) = expectMicAloneWithoutAppAudio(micOnly)
                print("measured: plain PulseAudio: mic alone 440 Hz \(alone) dBFS, app's 1 kHz \(leak) dBFS")
            }
        }
        @Test func aMonitorAsDefaultSourceIsNotTakenForAMicrophone() throws {
            try withPlainPulseAudio { environment in
                _ = try ExternalTools.run(
                    ["pactl", "set-default-source", "deskaudio_sink.monitor"], environment: environment)
                defer {
                    _ = try? ExternalTools.run(
                        ["pactl", "set-default-source", "deskaudio_mic"], environment: environment)
                }
                #expect(enable_audio(true, false) == deskaudio_status.DESKAUDIO_ERROR_STREAM.rawValue)
                #expect(
                    String(cString: deskaudio_last_error()!).contains("is a sink monitor, not a microphone"))
                #expect(String(cString: deskaudio_backend()!) == "", "nothing left running")
            }
        }

        /// Here the test mic (a remapped monitor) runs about 50 ms behind the app audio,
        /// beyond the mixer's 40 ms bound: it must be shifted, not lost.
        @Test func appAndMicAreMixedEachAtItsOwnLevel() throws {
            try withPlainPulseAudio { environment in
                let (app, mic) = try expectAppAndMicMixed(environment: environment)
                print("measured: plain PulseAudio, app + mic mixed: 1 kHz \(app) dBFS, 440 Hz \(mic) dBFS")
            }
        }
    }
}
