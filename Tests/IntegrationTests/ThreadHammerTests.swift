import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    /// Eight threads call enable_audio, set_audio_callback and friends at random while audio
    /// flows: nothing crashes or deadlocks, every frame delivered is whole and delivered
    /// once, and the library works normally afterwards.
    @Suite struct ThreadHammerTests {
        @Test func eightThreadsHammerStartStopAndCallbacksWhileAudioFlows() throws {
            let collectors = [FrameCollector(), FrameCollector()]
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 4)
            let calls = LockedValue<[Int32: Int]>([:])  // status → count, over every enable_audio call
            let done = DispatchGroup()
            for thread in 0..<8 {
                done.enter()
                Thread.detachNewThread {
                    var random = SeededRandom(seed: UInt64(thread + 1))
                    let end = Date().addingTimeInterval(4)
                    while Date() < end {
                        switch random.next() % 6 {
                        case 0, 1:
                            // Mostly on (mic toggling around it), sometimes all off.
                            let status = enable_audio(random.next() % 2 == 0, random.next() % 50 != 0)
                            calls.withLock { $0[status, default: 0] += 1 }
                        case 2:
                            let collector = collectors[Int(random.next() % 2)]
                            set_audio_callback(FrameCollector.callback, collector.userData)
                        case 3:
                            set_audio_callback(nil, nil)
                        case 4:
                            var stats = deskaudio_stats()
                            _ = deskaudio_get_stats(&stats, MemoryLayout<deskaudio_stats>.size)
                            _ = deskaudio_set_bitrate(Int32(16_000 + random.next() % 100_000))
                        default:
                            _ = deskaudio_backend()
                        }
                        usleep(UInt32(random.next() % 10_000))
                    }
                    done.leave()
                }
            }
            #expect(done.wait(timeout: .now() + 60) == .success, "all 8 threads finished: no deadlock")
            player.waitUntilExit()
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            _ = deskaudio_set_bitrate(128_000)
            let outcomes = calls.withLock { $0 }
            #expect((outcomes[0] ?? 0) > 20, "enable_audio succeeded many times: \(outcomes)")
            #expect(
                outcomes.keys.allSatisfy { $0 == 0 || $0 == deskaudio_status.DESKAUDIO_ERROR_TIMEOUT.rawValue },
                "only success (or a server too busy to answer in 3 s): \(outcomes)")

            // Every frame parsed, and no sequence number reached the callbacks twice.
            let frames = try collectors.flatMap { try $0.parsed() }
            let sequences = frames.map(\.header.sequence)
            #expect(Set(sequences).count == sequences.count, "no frame delivered twice")
            #expect(frames.count > 20, "frames flowed during the hammering: \(frames.count)")

            // Afterwards, capture works as ever.
            let collector = try capture(mic: false, app: true) {
                try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 1).waitUntilExit()
            }
            let tone = ToneCheck(try collector.decoded())
            #expect((95...110).contains(tone.loudFrames.count), "1 s of tone: \(tone.loudFrames.count)")
            print(
                "measured: 8-thread hammer, 4 s: enable_audio outcomes \(outcomes), \(frames.count) frames "
                    + "delivered, none twice; 1 s of tone after it: \(tone.loudFrames.count) loud frames")
        }
    }
}

