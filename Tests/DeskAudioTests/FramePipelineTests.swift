import DeskAudio
import TestSupport
import Testing

@Suite struct FramePipelineTests {
    struct Sent {
        var header: AudioFrameHeader
        var payload: [UInt8]
    }

    static func run(_ pipeline: FramePipeline, _ input: [Float], seed: UInt64, endTimeNs: UInt64 = 0)
        -> [Sent]
    {
        var random = SeededRandom(seed: seed)
        var sent: [Sent] = []
        var offset = 0
        while offset < input.count {
            let size = min(Int.random(in: 1...2500, using: &random), input.count - offset)
            input[offset..<offset + size].withUnsafeBufferPointer { chunk in
                pipeline.process(chunk, endTimeNs: endTimeNs) { bytes in
                    let frame = try! AudioFrameParser.parse(bytes)
                    sent.append(Sent(header: frame.header, payload: Array(frame.payload)))
                }
            }
            offset += size
        }
        return sent
    }

    static func frames(_ count: Int, of frame: [Float]) -> [Float] {
        Array([[Float]](repeating: frame, count: count).joined())
    }

    @Test func gateCountsSequenceAndSampleClockThroughASilence() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 50 * 480)
        let silence = [Float](repeating: 0, count: 1000 * AudioFormat.frameFloats)
        let secondTone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 30 * 480)
        let sent = Self.run(pipeline, tone + silence + secondTone, seed: 3)

        #expect(sent.count == 50 + 800 + 30)
        #expect(pipeline.counters.framesCaptured == 1080)
        #expect(pipeline.counters.framesSent == 880)
        #expect(pipeline.counters.framesGated == 200)
        #expect(sent.map(\.header.sequence) == Array(0..<880))
        #expect(sent.allSatisfy { $0.header.flags.contains(.app) })
        let afterGap = sent.indices.filter { sent[$0].header.flags.contains(.afterGap) }
        #expect(afterGap == [850])
        #expect(sent[849].header.sampleClock == 849 * 480)
        #expect(sent[850].header.sampleClock == 1050 * 480)
        #expect(sent[879].header.sampleClock == 1079 * 480)
        #expect(pipeline.counters.bytesSent == UInt64(sent.reduce(0) { $0 + 36 + $1.payload.count }))
    }

    @Test func floatsToNextFrameCountsWhatTheHeldPartialFrameLacks() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        #expect(pipeline.floatsToNextFrame == AudioFormat.frameFloats)
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 256 * 3)
        var frames = 0
        tone[0..<512].withUnsafeBufferPointer { pipeline.process($0, endTimeNs: 0) { _ in frames += 1 } }
        #expect(frames == 0)
        #expect(pipeline.floatsToNextFrame == 448)
        tone[512...].withUnsafeBufferPointer { pipeline.process($0, endTimeNs: 0) { _ in frames += 1 } }
        #expect(frames == 1)
        #expect(pipeline.floatsToNextFrame == 960 - (1536 - 960))
    }

    @Test func firstFrameAfterTheGapCarriesTheOnset() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let decoder = try OpusFrameDecoder()
        let silence = [Float](repeating: 0, count: 900 * AudioFormat.frameFloats)
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 20 * 480)
        let sent = Self.run(pipeline, silence + tone, seed: 9)
        #expect(sent.count == 800 + 20)
        var output = [Float](repeating: 0, count: AudioFormat.frameFloats)
        var decoded: [Float] = []
        for frame in sent[800...] {
            _ = try frame.payload.withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try decoder.decode(bytes, into: $0) }
            }
            decoded += output
        }
        // The tone starts in the first frame sent after the gap; 2.5 ms of codec delay at most.
        let firstFrame = SignalAnalysis.left(decoded[0..<AudioFormat.frameFloats])
        #expect(SignalAnalysis.rmsDecibels(Array(firstFrame[120...])) > -15)
    }

    @Test func captureTimeIsTheFramesFirstSample() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480 * 3)
        var times: [UInt64] = []
        tone.withUnsafeBufferPointer { chunk in
            pipeline.process(chunk, endTimeNs: 1_000_000_000) { bytes in
                times.append(try! AudioFrameParser.parse(bytes).header.captureTimeNs)
            }
        }
        #expect(times == [970_000_000, 980_000_000, 990_000_000])
    }

    /// A chunk on a clock mapping that started again flags the first frame stamped from it,
    /// the one whose capture time steps: in the middle of a partial frame, that frame; while
    /// the gate holds frames back, the first frame sent after them.
    @Test func aTimeStepFlagsTheFirstFrameStampedOnTheNewMapping() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480 * 4)
        var sent: [AudioFrameHeader] = []
        func feed(_ floats: ArraySlice<Float>, endTimeNs: UInt64, stepped: Bool) {
            floats.withUnsafeBufferPointer { chunk in
                pipeline.process(chunk, endTimeNs: endTimeNs, timeStepped: stepped) { bytes in
                    sent.append(try! AudioFrameParser.parse(bytes).header)
                }
            }
        }
        // 1.5 frames, then the rest on a mapping 2.7 ms later.
        feed(tone[0..<1440], endTimeNs: 1_015_000_000, stepped: false)
        feed(tone[1440...], endTimeNs: 1_042_700_000, stepped: true)
        #expect(sent.map { $0.flags.contains(.timeStep) } == [false, true, false, false])
        let expected: [Int64] = [1_000_000_000, 1_012_700_000, 1_022_700_000, 1_032_700_000]
        #expect(zip(sent, expected).allSatisfy { abs(Int64($0.captureTimeNs) - $1) <= 1 }, "\(sent.map(\.captureTimeNs))")

        // Held back by the gate: the flag waits for the next frame sent.
        let silence = [Float](repeating: 0, count: 801 * AudioFormat.frameFloats)
        feed(silence[...], endTimeNs: 0, stepped: false)
        sent.removeAll()
        feed(silence[0..<AudioFormat.frameFloats], endTimeNs: 0, stepped: true)
        feed(tone[0..<AudioFormat.frameFloats * 2], endTimeNs: 0, stepped: false)
        #expect(sent.map(\.flags.rawValue) == [
            AudioFrameHeader.Flags([.app, .afterGap, .timeStep]).rawValue, AudioFrameHeader.Flags.app.rawValue,
        ])
    }

    /// On a server clock, a frame whose time moved more than 0.05 ms against the last one's
    /// (whatever moved the line: a stall, a loop's slew) carries the time-step flag, so that
    /// frames without it are always their length apart within that; a smaller move does not,
    /// and times estimated from arrival are never judged. For the 2 s after the line started
    /// (a first report, another clock) it locks, and only a move of more than 0.5 ms is
    /// flagged; a relock of the running line opens no such window (ci24, pipewire-pulse 1.4.2:
    /// a frame 0.22 ms off in the 2 s after a relock went unflagged). The first frame follows no
    /// frame: it is never flagged.
    @Test func aFrameMovedMoreThanTheToleranceOnAServerClockIsFlagged() throws {
        let locking = 200  // frames: 2 s
        func flags(movesNs: [UInt64], onServerClock: Bool, relockAt: Int? = nil) throws -> [Bool] {
            let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
            let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480)
            var stepped: [Bool] = []
            var endNs: UInt64 = 1_000_000_000
            for (index, move) in ([0] + movesNs).enumerated() {
                endNs += 10_000_000 + move
                tone.withUnsafeBufferPointer {
                    pipeline.process(
                        $0, endTimeNs: endNs, timeStepped: index == relockAt, lineStarted: index == 0,
                        onServerClock: onServerClock
                    ) { bytes in
                        stepped.append(try! AudioFrameParser.parse(bytes).header.flags.contains(.timeStep))
                    }
                }
            }
            return stepped
        }
        let whileLocking: [UInt64] = [80_000, 0, 600_000, 0]
        let still = [UInt64](repeating: 0, count: locking - whileLocking.count)
        let settled: [UInt64] = [30_000, 0, 80_000, 49_000, 51_000, 0]
        let expected = [false, false, false, true, false] + [Bool](repeating: false, count: still.count)
            + [false, false, true, false, true, false]
        #expect(try flags(movesNs: whileLocking + still + settled, onServerClock: true) == expected)
        #expect(try flags(movesNs: whileLocking + still + settled, onServerClock: false) == [Bool](repeating: false, count: expected.count))
        // A relock 3 s in: its frame is flagged, and a move of 0.08 ms in the frame after it.
        let relocked: [UInt64] = [0, 0, 80_000, 0]
        let atRelock = 1 + whileLocking.count + still.count + settled.count + 1
        #expect(
            try flags(movesNs: whileLocking + still + settled + relocked, onServerClock: true, relockAt: atRelock)
                == expected + [false, true, true, false])
    }

    @Test func discontinuityFlagsTheNextFrameAndAdvancesTheClock() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480 * 2 + 100)
        var sent: [Sent] = []
        tone.withUnsafeBufferPointer { chunk in  // whole samples (run's chunks may split one)
            pipeline.process(chunk, endTimeNs: 0) { sent.append(Sent(header: try! AudioFrameParser.parse($0).header, payload: [])) }
        }
        pipeline.markDiscontinuity(skippedSamples: 4800)
        sent += Self.run(pipeline, SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 960), seed: 2)
        #expect(sent.map(\.header.sequence) == [0, 1, 2, 3])
        // The 100 samples short of a frame are dropped, and the clock runs on past them.
        let resumed: UInt64 = 960 + 100 + 4800
        #expect(sent.map(\.header.sampleClock) == [0, 480, resumed, resumed + 480])
        #expect(sent.map { $0.header.flags.contains(.afterGap) } == [false, false, true, false])
    }

    /// After a break, the first frame is stamped from the chunk it began in, whose time the
    /// caller measured the outage with, though a chunk on another mapping completes it; the
    /// frame after it carries TIME_STEP (R-RESTART-LINE). Times in ns on a 48 kHz line.
    @Test func theFirstFrameAfterABreakIsStampedFromTheChunkItBeganIn() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480 * 4)
        var sent: [AudioFrameHeader] = []
        func feed(_ samples: Range<Int>, endNs: UInt64, stepped: Bool = false, lineStarted: Bool = false) {
            tone[(samples.lowerBound * 2)..<(samples.upperBound * 2)].withUnsafeBufferPointer { chunk in
                pipeline.process(chunk, endTimeNs: endNs, timeStepped: stepped, lineStarted: lineStarted, onServerClock: true) {
                    sent.append(try! AudioFrameParser.parse($0).header)
                }
            }
        }
        let ns = { (samples: Int) in UInt64(samples) * 62_500 / 3 }  // 20 833.3 ns each
        feed(0..<480, endNs: ns(480))
        pipeline.markDiscontinuity(skippedSamples: 48_000)
        let resumedNs = ns(480 + 48_000)  // the outage: 1 s
        feed(0..<240, endNs: resumedNs + ns(240), stepped: true, lineStarted: true)
        // The rest of the frame on a line 30 ms later, and two frames more on it.
        let laterNs = resumedNs + 30_000_000
        feed(240..<1440, endNs: laterNs + ns(1440), stepped: true)
        #expect(sent.count == 4)
        #expect(sent[1].sampleClock == 480 + 48_000 && sent[1].captureTimeNs == resumedNs)
        #expect(sent[1].flags == [.app, .afterGap, .timeStep])
        #expect(sent[2].captureTimeNs == laterNs + ns(480) && sent[2].flags == [.app, .timeStep])
        #expect(sent[3].captureTimeNs == laterNs + ns(960) && sent[3].flags == .app)
    }

    /// After a break, the first frame holds only the new audio: the encoder's look-ahead
    /// held the last 2.5 ms of the old tone (a -19 dBFS blip in the first frame of a new
    /// capture, before encoders were reset at a break).
    @Test func afterADiscontinuityNothingOfTheOldAudioIsSent() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 50 * 480)
        let before = Self.run(pipeline, tone, seed: 4)
        pipeline.markDiscontinuity(skippedSamples: 0)
        let after = Self.run(pipeline, [Float](repeating: 0, count: 20 * AudioFormat.frameFloats), seed: 5)
        func levels(_ frames: [Sent], decoder: OpusFrameDecoder) throws -> [Double] {
            var output = [Float](repeating: 0, count: AudioFormat.frameFloats)
            return try frames.map { frame in
                _ = try frame.payload.withUnsafeBytes { packet in
                    try output.withUnsafeMutableBufferPointer { try decoder.decode(packet, into: $0) }
                }
                return SignalAnalysis.rmsDecibels(output)
            }
        }
        let fresh = try levels(after, decoder: try OpusFrameDecoder())
        let continuing = try OpusFrameDecoder()
        _ = try levels(before, decoder: continuing)
        let carriedOn = try levels(after, decoder: continuing)
        print("measured: after a break, decoded (fresh decoder) \(fresh.prefix(4).map { Int($0) }) dBFS, (decoder that heard the tone) \(carriedOn.prefix(4).map { Int($0) }) dBFS")
        #expect(after.count == 20)
        #expect(fresh.allSatisfy { $0 < -60 }, "fresh decoder: \(fresh)")
    }

    @Test func aFrameNamesEverySourceThatContributedToIt() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 480 * 6)
        var flags: [AudioFrameHeader.Flags] = []
        func feed(_ range: Range<Int>, _ sources: AudioFrameHeader.Flags) {
            tone[range].withUnsafeBufferPointer { chunk in
                pipeline.process(chunk, sources: sources, endTimeNs: 0) { bytes in
                    flags.append(try! AudioFrameParser.parse(bytes).header.flags)
                }
            }
        }
        feed(0..<700, [.app])  // frame 1 starts app-only …
        feed(700..<1200, [.app, .mic])  // … and ends mixed; frame 2 starts mixed …
        feed(1200..<2880, [.mic])  // … and ends mic-only; frame 3 is mic-only
        #expect(flags == [[.app, .mic], [.app, .mic], [.mic]])
        feed(2880..<3000, [.app])  // a partial app-only frame, dropped by the restart
        pipeline.markDiscontinuity(skippedSamples: 0)
        feed(3000..<3960, [.mic])
        #expect(flags.last == [.mic, .afterGap], "the dropped partial frame's app audio is not named")
    }

    /// The gate counts frames, not time: 800 zero frames of 2.5 ms (2 s) pass, then it holds;
    /// at 20 ms the same 800 frames are 16 s.
    @Test(arguments: [FrameDuration.ms2_5, .ms20])
    func theGateClosesAfter800FramesOfAnyLength(duration: FrameDuration) throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder(), frameDuration: duration)
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 10 * duration.samples)
        let silence = [Float](repeating: 0, count: 900 * duration.floats)
        let sent = Self.run(pipeline, tone + silence + tone, seed: 5)
        #expect(sent.count == 10 + 800 + 10)
        #expect(pipeline.counters.framesGated == 100)
        #expect(sent.allSatisfy { Int($0.header.frameSamples) == duration.samples })
        #expect(sent[810].header.flags.contains(.afterGap))
        #expect(sent[810].header.sampleClock == UInt64(910 * duration.samples))
    }

    /// Frames of each length decode to the tone they were cut from. Where the length changes,
    /// libopus's CELT itself dips for a few ms (a 1 kHz tone falls to about −22 dBFS for two
    /// 2.5 ms blocks going from 10 to 2.5 ms frames, with libopus alone): the 10 ms block
    /// holding a change, or the one after it, may be off the level; no other block is.
    @Test func framesOfEveryLengthDecodeToTheToneAcrossChanges() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 48_000)
        var sent: [Sent] = []
        var offset = 0
        for duration in [FrameDuration.ms10, .ms2_5, .ms5, .ms20, .ms10] {
            pipeline.setFrameDuration(duration)
            let end = offset + 9_600 * 2  // 0.2 s
            sent += Self.run(pipeline, Array(tone[offset..<end]), seed: UInt64(offset))
            offset = end
        }
        #expect(zip(sent, sent.dropFirst()).allSatisfy { $1.header.sampleClock == $0.header.sampleClock + UInt64($0.header.frameSamples) })
        var lengths: [UInt16] = []
        for frame in sent where lengths.last != frame.header.frameSamples { lengths.append(frame.header.frameSamples) }
        #expect(lengths == [480, 120, 240, 960, 480])
        let decoder = try OpusFrameDecoder()
        var output = [Float](repeating: 0, count: FrameDuration.longest.floats)
        var decoded: [Float] = []
        for frame in sent {
            let samples = try frame.payload.withUnsafeBytes { packet in
                try output.withUnsafeMutableBufferPointer { try decoder.decode(packet, into: $0) }
            }
            #expect(samples == Int(frame.header.frameSamples))
            decoded += output[0..<(samples * 2)]
        }
        let check = ToneCheck(decoded)
        #expect(check.isContiguous)
        // The changes were at 0.2, 0.4, 0.6 and 0.8 s: 10 ms blocks 20, 40, 60 and 80 (the
        // decoder's output lags 2.5 ms, so the dip may fall in the block after).
        let nearAChange = Set([20, 40, 60, 80].flatMap { [$0, $0 + 1] })
        let dropouts = check.dropouts(expected: -9.03, tolerance: 1)
        #expect(Set(dropouts).isSubset(of: nearAChange), "blocks off -9.03 dBFS: \(check.describe(dropouts))")
        #expect(abs(SignalAnalysis.dominantFrequency(check.interior) - 1000) <= 20)
        print("measured: 10 → 2.5 → 5 → 20 → 10 ms frames: blocks off the tone by more than 1 dB: \(check.describe(dropouts))")
    }
}
