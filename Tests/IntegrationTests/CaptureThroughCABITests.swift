import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    @Suite struct CaptureThroughCABITests {
        @Test func toneComesBackAtItsFrequencyAndLevelWithoutDropouts() throws {
            let collector = FrameCollector()
            let skipsBefore = serverSkips()
            let statsBefore = StatsThroughCABITests.stats()
            set_audio_callback(FrameCollector.callback, collector.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { collector.count >= 10 }, "frames flow within 3 s")
            let (player, tap) = try MonitorTap.recording {
                let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 2)
                player.waitUntilExit()
                Thread.sleep(forTimeInterval: 0.3)
                return player
            }
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            let statsAfter = StatsThroughCABITests.stats()

            let frames = try collector.parsed()
            #expect(player.terminationStatus == 0)
            try #require(!frames.isEmpty)
            // Every frame, or each one missing counted as dropped for the callback (the delivery
            // thread not run for 0.5 s: 8 frames under AddressSanitizer with four sanitized
            // suites and Chromium at once).
            let dropped = expectHolesAreCountedCallbackDrops(
                frames, droppedForCallback: statsAfter.frames_dropped_slow_callback - statsBefore.frames_dropped_slow_callback)
            #expect(frames.allSatisfy { $0.header.flags.subtracting([.afterGap, .timeStep, .afterLoss]) == [.app] })
            // A real server's clock may step under load (each step is flagged, and the scenario
            // lane asserts exactly when the library flags one): the steps beyond the server's
            // counted gaps are measured (Debian 13 under CI's load: one, with none counted).
            let steps = frames.indices.filter { frames[$0].header.flags.contains(.timeStep) }
            let gaps = serverSkips() - skipsBefore
            expectWithinBudget(
                "TIME_STEP frames beyond the server's gaps", Double(max(steps.count - Int(gaps), 0)),
                unit: "frames", .atMost(3),
                "at frames \(steps.filter { $0 > 0 }.map { "\($0): \(Int64(bitPattern: frames[$0].header.captureTimeNs &- frames[$0 - 1].header.captureTimeNs) - 10_000_000) ns off" })")
            let times = frames.map(\.header.captureTimeNs)
            #expect(zip(times, times.dropFirst()).allSatisfy { $1 > $0 }, "capture times increase")

            let tone = ToneCheck(try collector.decoded())
            let expected = toneBlocks(played: 200, gapFrames: gaps)
            #expect(
                ((expected.lowerBound - dropped)...expected.upperBound).contains(tone.loudFrames.count),
                "2 s of tone: \(tone.loudFrames.count) loud frames, the server's gaps \(gaps), \(dropped) dropped for the callback")
            let high = tone.dropouts(expected: halfScaleSineLevel, tolerance: 1).filter { tone.frameLevels[$0] > halfScaleSineLevel }
            #expect(high.isEmpty, "frames above the tone level: \(tone.describe(high))")
            let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
                tone, tap: tap, serverSkips: gaps, sinkSilence: sinkSilenceBlocks(in: tone, playedSeconds: 2, frames: frames.map(\.header)))
            print(
                "measured: C ABI capture of 1 kHz at \(halfScaleSineLevel) dBFS: \(frequency) Hz, \(level) dBFS, "
                    + "\(tone.loudFrames.count) loud frames, \(frames.count) frames in sequence")
        }

        @Test func silenceClosesTheGateAfter800FramesAndTheOnsetReopensIt() throws {
            let collector = FrameCollector()
            set_audio_callback(FrameCollector.callback, collector.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            defer {
                _ = enable_audio(false, false)
                set_audio_callback(nil, nil)
            }
            #expect(waitUntil(seconds: 3) { collector.count >= 10 })
            let first = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 0.3)
            first.waitUntilExit()
            // 800 frames of silence are 8 s; then nothing may come.
            #expect(waitUntil(seconds: 12) { collector.secondsSinceLastFrame > 1 }, "the gate closes")
            let whileGated = collector.count
            Thread.sleep(forTimeInterval: 1)
            #expect(collector.count == whileGated, "nothing is sent while the gate is closed")
            let second = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 0.3)
            second.waitUntilExit()
            Thread.sleep(forTimeInterval: 0.2)
            _ = enable_audio(false, false)

            let frames = try collector.parsed()
            let sequences = frames.map(\.header.sequence)
            // (No frames at all, as with a server gone: a failure, not an index out of range
            // that takes the whole test process down.)
            let firstSequence = try #require(sequences.first, "frames came")
            #expect(
                sequences == Array(firstSequence..<(firstSequence + UInt32(frames.count))),
                "no sent frame lost")
            let gaps = frames.indices.filter { frames[$0].header.flags.contains(.afterGap) && $0 > 0 }
            #expect(gaps.count == 1, "exactly one frame marked after a gap: \(gaps)")
            guard let gap = gaps.first else { return }
            let skipped = frames[gap].header.sampleClock - frames[gap - 1].header.sampleClock - 480
            #expect(
                skipped >= 100 * 480 && skipped % 480 == 0,
                "the sample clock ran on through the gate: \(skipped)")

            let decoded = try collector.decoded()
            func level(_ frame: Int, _ range: Range<Int>) -> Double {
                SignalAnalysis.rmsDecibels(
                    SignalAnalysis.left(
                        decoded[(frame * 960 + range.lowerBound * 2)..<(frame * 960 + range.upperBound * 2)]))
            }
            // The last frame holding the first tone (past the codec's 2.5 ms delay) …
            let lastLoud = (0..<gap).last { level($0, 240..<480) > -40 }
            #expect(lastLoud != nil)
            if let lastLoud {
                // … is followed by 800 all-zero frames that are sent (±1 for the frame where the tone ends).
                #expect((799...801).contains(gap - 1 - lastLoud), "zero frames sent: \(gap - 1 - lastLoud)")
                print(
                    "measured: gate: \(gap - 1 - lastLoud) silent frames sent, then \(skipped / 480) held; "
                        + "first frame after the gap has sequence \(frames[gap].header.sequence)")
            }
            // The onset is in the first frame after the gap or the one right after it.
            #expect(max(level(gap, 0..<480), level(gap + 1, 0..<480)) > -15, "onset kept")
        }

        /// Capture stopped right after a tone and started again at once: the new capture's
        /// frames hold only what the sink plays now (silence), none of the previous audio
        /// (the encoder's look-ahead once carried the tone's last 2.5 ms into the first frame:
        /// -19 dBFS, why SlowHostTests failed in full CI runs after a tone test).
        @Test func aNewCaptureHoldsNoneOfThePreviousCapturesAudio() throws {
            let previous = FrameCollector()
            set_audio_callback(FrameCollector.callback, previous.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { previous.count >= 10 })
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 1)
            player.waitUntilExit()
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            let stoppedNs = MonotonicClock.nowNs()

            let next = FrameCollector()
            set_audio_callback(FrameCollector.callback, next.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { next.count >= 30 })
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)

            let frames = try next.parsed()
            let levels = ToneCheck(try next.decoded()).frameLevels
            let startedAfterMs = (Int64(frames[0].header.captureTimeNs) - Int64(stoppedNs)) / 1_000_000
            print(
                "measured: new capture \(startedAfterMs) ms after the stop: first frames "
                    + "\(levels.prefix(4).map { Int($0) }) dBFS, loudest \(Int(levels.max() ?? 0)) dBFS")
            #expect(frames[0].header.flags.contains(.afterGap), "the new capture starts flagged after a gap")
            #expect(levels.allSatisfy { $0 < -60 }, "loud frames in the new capture: \(levels.indices.filter { levels[$0] >= -60 })")
        }

        @Test func noCallbackAfterUnregisterOrDisableHasReturned() throws {
            let first = FrameCollector()
            set_audio_callback(FrameCollector.callback, first.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { first.count >= 10 })
            set_audio_callback(nil, nil)
            let afterUnregister = first.count
            Thread.sleep(forTimeInterval: 0.3)
            #expect(first.count == afterUnregister)

            let second = FrameCollector()
            set_audio_callback(FrameCollector.callback, second.userData)
            #expect(
                waitUntil(seconds: 3) { second.count >= 10 }, "capture kept running without a callback")
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            let afterDisable = second.count
            Thread.sleep(forTimeInterval: 0.3)
            #expect(second.count == afterDisable)
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue, "idempotent")
            set_audio_callback(nil, nil)
        }

        @Test func callbackCanReplaceItselfButNotStartCaptureFromInside() throws {
            let successor = FrameCollector()
            let first = FrameCollector()
            first.handOverTo = successor
            set_audio_callback(FrameCollector.callback, first.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue, "idempotent")
            #expect(waitUntil(seconds: 3) { successor.count >= 10 }, "the successor receives frames")
            #expect(first.count == 1)
            #expect(
                first.statusFromInsideCallback == deskaudio_status.DESKAUDIO_ERROR_WRONG_THREAD.rawValue)
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
        }

        /// A host that stops when its send fails stops from inside the callback: that call
        /// succeeds and is the callback's last; capture stops; a later start delivers again.
        @Test func aStopFromInsideTheCallbackIsItsLastCall() throws {
            let successor = FrameCollector()
            let first = FrameCollector()
            first.handOverTo = successor
            first.stopsCaptureOnHandOver = true
            set_audio_callback(FrameCollector.callback, first.userData)
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { first.count >= 1 })
            #expect(waitUntil(seconds: 1) { String(cString: deskaudio_backend()!) == "" }, "capture stopped")
            Thread.sleep(forTimeInterval: 0.3)
            #expect(first.statusFromInsideCallback == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(first.count == 1, "the stopping call was the last one")
            #expect(successor.count == 0, "no frame after the stop, to the callback set after it either")

            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { successor.count >= 10 }, "a new start delivers to the callback set last")
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
        }

        @Test func unsupportedAndInvalidRequestsReturnCodesAndMessages() {
            #expect(
                deskaudio_set_bitrate(5_999) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            #expect(String(cString: deskaudio_last_error()!).contains("5999"))
            #expect(
                deskaudio_set_complexity(-1) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            #expect(deskaudio_set_bitrate(96_000) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(deskaudio_set_bitrate(128_000) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(
                String(cString: deskaudio_strerror(deskaudio_status.DESKAUDIO_ERROR_NO_SERVER.rawValue)!)
                    == "no audio server")
            #expect(String(cString: deskaudio_strerror(-999)!) == "unknown error")
            #expect(String(cString: deskaudio_version()!) == "0.4.0")
            #expect(deskaudio_encoder_pre_skip() == 120)
        }
    }
}
