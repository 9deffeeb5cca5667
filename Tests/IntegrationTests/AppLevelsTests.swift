import DeskAudio
import DeskAudioC
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// Levels per recorded application (deskaudio_capture_set_app_levels and
    /// deskaudio_capture_get_app_levels) against players 20 dB apart, on PipeWire's native
    /// backend (a level stream linked beside the capture), pipewire-pulse and the plain
    /// PulseAudio daemon (the record stream of each sink input).
    @Suite struct AppLevelsTests {
        /// What deskaudio_capture_get_app_levels() reported: name, RMS and peak in dBFS.
        final class Reported {
            var levels: [(name: String, peak: Float, rms: Float)] = []
            var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
            static let callback: deskaudio_app_level_callback = { name, _, _, peak, rms, userData in
                let reported = Unmanaged<Reported>.fromOpaque(userData!).takeUnretainedValue()
                reported.levels.append((String(cString: name!), peak, rms))
            }
        }

        static func levels(_ capture: deskaudio_capture?) -> (count: Int32, levels: [(name: String, peak: Float, rms: Float)]) {
            let reported = Reported()
            let count = deskaudio_capture_get_app_levels(capture, Reported.callback, reported.userData)
            return (count, reported.levels.sorted { $0.name < $1.name })
        }

        @Test func eachRecordedApplicationHasItsOwnLevel() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                let capture = try #require(deskaudio_capture_create())
                defer { deskaudio_capture_destroy(capture) }
                let frames = FrameCollector()
                #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, frames.userData) == 0)
                #expect(deskaudio_capture_set_backend(capture, backend) == 0)
                #expect(AppRoutingTests.setApps(capture, .DESKAUDIO_APPS_ONLY, ["ToneA", "toneb"]) == 0)
                #expect(deskaudio_capture_set_app_levels(capture, true) == 0)
                #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(AppRoutingTests.lastError())")
                #expect(waitUntil(seconds: 3) { frames.count >= 10 }, "\(path): frames flow")
                let players = try [(440.0, 0.3, "ToneA"), (1000, 0.03, "ToneB"), (1500, 0.3, "ToneC")].map {
                    try ExternalTools.playTone(
                        frequency: $0.0, amplitude: Float($0.1), seconds: 8, application: $0.2,
                        environment: environment)
                }
                // The levels are over the last second: read them a second after both players
                // are first heard (not at a fixed time: CI once read ToneB, through
                // pipewire-pulse, before it was heard, 1.7 s after the players started).
                let started = Date()
                let heard = waitUntil(seconds: 5) {
                    Self.levels(capture).levels.filter { $0.peak > -100 }.count == 2
                }
                let heardAfter = Date().timeIntervalSince(started)
                Thread.sleep(forTimeInterval: 1.1)
                let (count, levels) = Self.levels(capture)
                players.forEach {
                    $0.terminate()
                    $0.waitUntilExit()
                }
                #expect(heard, "\(path): both applications heard within 5 s of their start: \(levels)")
                #expect(deskaudio_capture_enable(capture, false, false) == 0)
                #expect(count == 2 && levels.map(\.name) == ["ToneA", "ToneB"], "\(path): \(levels)")
                // A sine of amplitude a: peak 20 log10(a), RMS 3.01 dB below.
                for (level, amplitude) in zip(levels, [0.3, 0.03]) {
                    let peak = Float(20 * log10(amplitude))
                    #expect(abs(level.peak - peak) <= 1 && abs(level.rms - (peak - 3.01)) <= 1, "\(path): \(level)")
                }
                #expect(Self.levels(capture).count == 0, "\(path): levels after the capture stopped")
                print("measured: \(path): levels per app (peak/RMS dBFS): \(levels), both heard \(String(format: "%.2f", heardAfter)) s after the players started")
            }
        }
    }
}
