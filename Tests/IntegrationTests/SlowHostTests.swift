import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    /// A frame callback that blocks must hold up neither capture nor encoding.
    @Suite struct SlowHostTests {
        @Test func callbacksThatBlockFor200msLoseNothing() throws {
            let collector = FrameCollector()
            collector.stalls = [60: 0.2, 120: 0.2, 180: 0.2]
            let skipsBefore = serverSkips()
            set_audio_callback(FrameCollector.callback, collector.userData)
            let before = StatsThroughCABITests.stats()
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            let (_, tap) = try MonitorTap.recording {
                try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 3).waitUntilExit()
                Thread.sleep(forTimeInterval: 0.3)
            }
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            let after = StatsThroughCABITests.stats()

            let frames = try collector.parsed()
            let arrivals = collector.arrivalTimes
            try #require(frames.count > 200, "\(frames.count) frames")
            let sequences = frames.map(\.header.sequence)
            #expect(sequences == Array(sequences[0]..<(sequences[0] + UInt32(frames.count))), "every frame, in order")
            let clocks = frames.map(\.header.sampleClock)
            #expect(zip(clocks, clocks.dropFirst()).allSatisfy { $1 == $0 + 480 }, "no audio missing")
            #expect(!frames.contains { $0.header.flags.contains(.afterLoss) })
            #expect(after.frames_dropped_slow_callback == before.frames_dropped_slow_callback)
            #expect(after.frames_dropped_overflow == before.frames_dropped_overflow)
            // While the callback slept, frames went on being captured 10 ms apart; they
            // waited in the queue and came in a burst after it.
            var burstSpans: [Double] = []
            var captureSpans: [Double] = []
            for stalled in collector.stalls.keys.sorted() {
                let burst = (stalled + 1)...(stalled + 15)
                let captureSpan =
                    Double(frames[burst.upperBound].header.captureTimeNs - frames[burst.lowerBound].header.captureTimeNs)
                    / 1e9
                let arrivalSpan = arrivals[burst.upperBound].timeIntervalSince(arrivals[burst.lowerBound])
                // 14 frames hold 140 ms of audio. The server hands it over in chunks of its
                // own (up to ~40 ms under load), so the bounds are loose; a capture held up
                // by the callback would show a span near 0 (caught up in one go after it).
                #expect((0.09...0.3).contains(captureSpan), "captured in real time: \(captureSpan) s for 14 frames")
                #expect(arrivalSpan < 0.1, "delivered as a burst: \(arrivalSpan) s for 14 frames")
                burstSpans.append(arrivalSpan)
                captureSpans.append(captureSpan)
            }
            let tone = ToneCheck(try collector.decoded())
            let high = tone.dropouts(expected: halfScaleSineLevel, tolerance: 1).filter { tone.frameLevels[$0] > halfScaleSineLevel }
            #expect(high.isEmpty, "frames above the tone level: \(tone.describe(high))")
            let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
                tone, tap: tap, serverSkips: serverSkips() - skipsBefore)
            print(
                "measured: 3 callbacks blocking 200 ms: \(frames.count) frames in sequence, 0 dropped, "
                    + "14 queued frames captured over \(captureSpans.map { Int($0 * 1000) }) ms, delivered in \(burstSpans.map { Int($0 * 1000) }) ms after each; "
                    + "tone \(frequency) Hz, \(level) dBFS, unbroken")
        }

        @Test func aCallbackBlockedPastTheQueueLosesTheOldestFramesAndFlagsTheNext() throws {
            let collector = FrameCollector()
            collector.stalls = [30: 1.0]
            set_audio_callback(FrameCollector.callback, collector.userData)
            let before = StatsThroughCABITests.stats()
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 2.5)
            #expect(waitUntil(seconds: 3) { collector.count >= 31 })
            // The callback sleeps now; capture and encoding go on.
            let capturedAtStall = StatsThroughCABITests.stats().frames_captured
            Thread.sleep(forTimeInterval: 0.5)
            let capturedDuringStall = StatsThroughCABITests.stats().frames_captured - capturedAtStall
            player.waitUntilExit()
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            let after = StatsThroughCABITests.stats()

            #expect((40...60).contains(capturedDuringStall), "\(capturedDuringStall) frames captured in 0.5 s of the stall")
            let frames = try collector.parsed()
            let flagged = frames.indices.filter { frames[$0].header.flags.contains(.afterLoss) }
            try #require(flagged.count == 1, "one frame after the loss: \(flagged)")
            let first = flagged[0]
            let dropped = after.frames_dropped_slow_callback - before.frames_dropped_slow_callback
            let hole = frames[first].header.sequence - frames[first - 1].header.sequence - 1
            #expect(first == 31, "the frames queued before the stall ended were dropped, not those before it")
            #expect(UInt64(hole) == dropped, "the sequence hole (\(hole)) is what stats count (\(dropped))")
            #expect((40...60).contains(dropped), "about 1 s minus the 0.5 s queue: \(dropped)")
            let clocks = frames.map(\.header.sampleClock)
            #expect(
                zip(clocks, clocks.dropFirst()).enumerated().allSatisfy { index, pair in
                    pair.1 == pair.0 + 480 * (index + 1 == first ? UInt64(hole) + 1 : 1)
                }, "the sample clock skips exactly the dropped frames")
            let sequences = frames[first...].map(\.header.sequence)
            #expect(sequences == Array(sequences[0]..<(sequences[0] + UInt32(sequences.count))))
            print(
                "measured: callback blocked 1 s: \(capturedDuringStall) frames captured in 0.5 s of it, "
                    + "\(dropped) oldest dropped (queue \(DESKAUDIO_QUEUE_FRAMES)), sequence hole \(hole), "
                    + "flagged frame #\(first)")
        }

        @Test func aCallbackCanCallBackIntoTheLibrary() throws {
            let probe = ReentrantProbe()
            set_audio_callback(ReentrantProbe.callback, Unmanaged.passUnretained(probe).toOpaque())
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { probe.calls >= 20 }, "the callback ran 20 times: \(probe.calls)")
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            #expect(probe.enableStatuses == [deskaudio_status.DESKAUDIO_ERROR_WRONG_THREAD.rawValue])
            #expect(probe.statsStatuses.allSatisfy { $0 == deskaudio_status.DESKAUDIO_OK.rawValue })
            #expect(probe.framesSentSeen.last ?? 0 > 0)
        }
    }
}

/// A callback that, on every frame, reads stats, sets itself again as the callback and
/// (once) tries to change what is captured, which only a stop may do there: none of it may
/// deadlock.
private final class ReentrantProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var enableTried = false
    private var callsSoFar = 0
    private var enableResults: [Int32] = []
    private var statsResults: [Int32] = []
    private var framesSent: [UInt64] = []

    var calls: Int { lock.withLock { callsSoFar } }
    var enableStatuses: [Int32] { lock.withLock { enableResults } }
    var statsStatuses: [Int32] { lock.withLock { statsResults } }
    var framesSentSeen: [UInt64] { lock.withLock { framesSent } }

    static let callback: deskaudio_frame_callback = { _, _, userData in
        let probe = Unmanaged<ReentrantProbe>.fromOpaque(userData!).takeUnretainedValue()
        var stats = deskaudio_stats()
        let statsStatus = deskaudio_get_stats(&stats, MemoryLayout<deskaudio_stats>.size)
        set_audio_callback(ReentrantProbe.callback, userData)
        probe.lock.lock()
        let tryEnable = !probe.enableTried
        probe.enableTried = true
        probe.lock.unlock()
        let enableStatus = tryEnable ? enable_audio(true, true) : nil
        probe.lock.lock()
        probe.callsSoFar += 1
        probe.statsResults.append(statsStatus)
        probe.framesSent.append(stats.frames_sent)
        if let enableStatus { probe.enableResults.append(enableStatus) }
        probe.lock.unlock()
    }
}
