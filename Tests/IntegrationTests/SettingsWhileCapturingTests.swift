import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    @Suite struct SettingsWhileCapturingTests {
        /// A tone plays throughout; the bitrate is lowered, then a 12 % loss report halves it:
        /// each change shows in the payload sizes of the frames that follow, with no restart.
        @Test func bitrateChangesAndLossReportsTakeEffectWithoutARestart() throws {
            let collector = FrameCollector()
            set_audio_callback(FrameCollector.callback, collector.userData)
            defer {
                _ = enable_audio(false, false)
                set_audio_callback(nil, nil)
                _ = deskaudio_set_bitrate(128_000)
            }
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            // Without frames nothing below means anything: stop here (and never slice with a
            // range turned upside down, which would crash the whole test run).
            try #require(waitUntil(seconds: 3) { collector.count >= 10 }, "frames while capturing")
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 2.4)
            Thread.sleep(forTimeInterval: 0.8)
            let first = collector.count
            #expect(deskaudio_set_bitrate(48_000) == deskaudio_status.DESKAUDIO_OK.rawValue)
            Thread.sleep(forTimeInterval: 0.6)
            let second = collector.count
            #expect(deskaudio_report_packet_loss(0.12) == 24_000, "12 % loss halves 48 kbit/s")
            #expect(deskaudio_report_packet_loss(.nan) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            player.waitUntilExit()
            _ = enable_audio(false, false)
            let frames = try collector.parsed()
            func meanPayload(from start: Int, to end: Int) -> Double {
                let lower = min(max(start, 0), frames.count)
                let slice = frames[lower..<min(max(end, lower), frames.count)]
                return Double(slice.map { $0.payload.count }.reduce(0, +)) / Double(max(slice.count, 1))
            }
            // Skip 5 frames after each change: the frames in flight when the call returned.
            let at128 = meanPayload(from: first - 30, to: first)
            let at48 = meanPayload(from: first + 5, to: second)
            let at24 = meanPayload(from: second + 5, to: second + 60)
            #expect(abs(at128 - 160) < 30, "128 kbit/s is 160 bytes per 10 ms: \(at128)")
            #expect(abs(at48 - 60) < 12, "48 kbit/s is 60 bytes per 10 ms: \(at48)")
            #expect(abs(at24 - 30) < 8, "24 kbit/s is 30 bytes per 10 ms: \(at24)")
            print("measured: mean payload at 128/48/24 kbit/s: \(at128) / \(at48) / \(at24) bytes")
        }
    }
}
