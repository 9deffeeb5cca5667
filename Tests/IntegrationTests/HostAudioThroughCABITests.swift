import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    /// deskaudio_push_pcm(): the host's own PCM, alone and mixed with captured audio.
    @Suite struct HostAudioThroughCABITests {
        /// Pushes `seconds` of a 440 Hz sine at 0.3, mono s16 at 16 kHz, in 20 ms pieces at
        /// real-time pace, as a host's other audio API would deliver it: each piece is due 20 ms
        /// after the one before on a fixed schedule, so a late wake-up is caught up (sleeping
        /// 20 ms after each push fell behind real time on a loaded machine, and the overlay ran
        /// dry: the tone 2.7 dB low under AddressSanitizer with four suites at once).
        static func push440Hz(seconds: Double) {
            let rate = 16_000
            let tone = SignalAnalysis.sine(
                frequency: 440 * 48_000 / Double(rate), amplitude: 0.3, frames: Int(Double(rate) * seconds))
            let mono = stride(from: 0, to: tone.count, by: 2).map { Int16(($0 < tone.count ? tone[$0] : 0) * 32767) }
            let startNs = MonotonicClock.nowNs()
            for (index, start) in stride(from: 0, to: mono.count, by: 320).enumerated() {
                let piece = mono[start..<min(start + 320, mono.count)]
                let taken = piece.withUnsafeBytes {
                    deskaudio_push_pcm(
                        $0.baseAddress, $0.count, deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue, 1, Int32(rate))
                }
                #expect(taken == Int32(piece.count))
                sleepUntil(monotonicNs: startNs + UInt64(index + 1) * 20_000_000)
            }
        }

        @Test func hostPCMAloneIsFramedAndKeepsItsToneAndLevel() throws {
            let collector = FrameCollector()
            set_audio_callback(FrameCollector.callback, collector.userData)
            defer {
                _ = enable_audio(false, false)
                set_audio_callback(nil, nil)
            }
            Self.push440Hz(seconds: 1.5)
            #expect(waitUntil(seconds: 2) { collector.count >= 140 })
            let frames = try collector.parsed()
            #expect(frames.allSatisfy { $0.header.flags.subtracting(.afterGap) == [.host] })
            let sequences = frames.map(\.header.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
            let decoded = try collector.decoded()
            let level = SignalAnalysis.toneLevelWherePresent(decoded, frequency: 440)
            let steady = Array(decoded[(20 * 960)..<(decoded.count - 20 * 960)])
            let frequency = SignalAnalysis.dominantFrequency(SignalAnalysis.left(steady[...]))
            #expect(abs(frequency - 440) < 2, "\(frequency) Hz")
            #expect(abs(level - -13.47) < 1, "\(level) dBFS")
            print("measured: host PCM alone (s16 mono 16 kHz, 440 Hz @0.3): \(frequency) Hz, \(level) dBFS, \(frames.count) frames")
        }

        @Test func hostPCMIsMixedWithCapturedAppAudio() throws {
            let collector = try capture(mic: false, app: true) {
                let app = try ExternalTools.playTone(frequency: 1000, amplitude: 0.3, seconds: 1.5)
                Self.push440Hz(seconds: 1.5)
                app.waitUntilExit()
            }
            let frames = try collector.parsed()
            #expect(frames.contains { $0.header.flags.isSuperset(of: [.app, .host]) })
            let decoded = try collector.decoded()
            let app = SignalAnalysis.toneLevelWherePresent(decoded, frequency: 1000)
            let host = SignalAnalysis.toneLevelWherePresent(decoded, frequency: 440)
            #expect(abs(app - -13.47) < 1.5, "app's 1 kHz at \(app) dBFS")
            #expect(abs(host - -13.47) < 1.5, "host's 440 Hz at \(host) dBFS")
            print("measured: app 1 kHz + host PCM 440 Hz mixed: \(app) dBFS, \(host) dBFS")
        }

        @Test func badPushesReturnErrorsAndTakeNothing() {
            let samples = [Int16](repeating: 0, count: 3)
            samples.withUnsafeBytes { bytes in
                let s16 = deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue
                let invalid = deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue
                #expect(deskaudio_push_pcm(nil, 4, s16, 2, 48_000) == invalid)
                #expect(deskaudio_push_pcm(bytes.baseAddress, bytes.count, s16, 2, 48_000) == invalid)
                #expect(deskaudio_push_pcm(bytes.baseAddress, 2, 7, 1, 48_000) == invalid)
                #expect(deskaudio_push_pcm(bytes.baseAddress, 2, s16, 1, 192_000)
                    == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue)
                #expect(deskaudio_push_pcm(nil, 0, s16, 1, 48_000) == 0)
            }
            #expect(String(cString: deskaudio_last_error()!).contains("8000"))
        }
    }
}
