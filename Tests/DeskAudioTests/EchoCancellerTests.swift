@testable import DeskAudio
import Glibc
import TestSupport
import Testing

/// The viewer encoder's echo cancellation, on simulated time: what the speakers played is
/// found by its time, the delay is found from the signals, the echo of seeded noise through a
/// fixed path is taken out, and turning it on and off loses no microphone audio. The rooms,
/// speech and music are judged by Tests/Echo/echo_rig.py through the C API.
@Suite struct EchoCancellerTests {
    static let rate = AudioFormat.sampleRate
    static let startNs: UInt64 = 1_000_000_000_000

    /// The time sample `index` (48 kHz, from the start) leaves the speakers or is captured.
    static func timeNs(ofSample index: Int) -> UInt64 { startNs + UInt64(index) * 1_000_000_000 / UInt64(rate) }

    /// Seeded noise with a syllable-like envelope (bursts of 150 ms, 100 ms apart), as far-end speech.
    static func bursts(samples: Int, seed: UInt64) -> [Float] {
        var generator = SeededRandom(seed: seed)
        return (0..<samples).map { index in
            let inBurst = index % (rate / 4) < rate * 15 / 100
            return inBurst ? Float.random(in: -0.3...0.3, using: &generator) : 0
        }
    }

    // MARK: The speakers' time line

    @Test func playedAudioIsReadBackByTheTimeItLeftTheSpeakers() {
        var reference = PlaybackReference()
        defer { reference.deallocate() }
        let played = (0..<960).map { Float($0) }
        played.withUnsafeBufferPointer { reference.append($0, endTimeNs: Self.timeNs(ofSample: 959)) }
        var block = [Float](repeating: -1, count: 480)
        // The 480 samples ending at sample 700's time are samples 221…700.
        let missing = block.withUnsafeMutableBufferPointer { reference.read(into: $0, endingAt: Self.timeNs(ofSample: 700)) }
        #expect(missing == 0)
        #expect(block.first == 221 && block.last == 700)
        // Half not pushed yet: zeros, counted.
        let ahead = block.withUnsafeMutableBufferPointer { reference.read(into: $0, endingAt: Self.timeNs(ofSample: 1199)) }
        #expect(ahead == 240 && block[239] == 959 && block[240] == 0)
    }

    @Test func aPauseInWhatIsPlayedIsSilence() {
        var reference = PlaybackReference()
        defer { reference.deallocate() }
        let ones = [Float](repeating: 1, count: 480)
        ones.withUnsafeBufferPointer { reference.append($0, endTimeNs: Self.timeNs(ofSample: 479)) }
        // The next 480 are played 100 ms (4800 samples) later than they would follow on.
        ones.withUnsafeBufferPointer { reference.append($0, endTimeNs: Self.timeNs(ofSample: 479 + 4800 + 480)) }
        #expect(reference.pausedSamples == 4800)
        var block = [Float](repeating: -1, count: 480)
        _ = block.withUnsafeMutableBufferPointer { reference.read(into: $0, endingAt: Self.timeNs(ofSample: 479 + 2400)) }
        #expect(block.allSatisfy { $0 == 0 })
        _ = block.withUnsafeMutableBufferPointer { reference.read(into: $0, endingAt: Self.timeNs(ofSample: 479 + 4800 + 480)) }
        #expect(block.allSatisfy { $0 == 1 })
    }

    @Test func stampsThatWobbleLeaveTheTimelineSteady() {
        // A player's pushes of 480 samples, each stamped up to 1.5 ms off (seeded), as a loaded
        // machine stamps them: read back by true times, the samples are where they played
        // within 0.5 ms (21 samples measured), not wherever the last stamp put them, up to
        // 1.5 ms (72 samples) off (R-ECHO-STAMPS).
        var reference = PlaybackReference()
        defer { reference.deallocate() }
        var generator = SeededRandom(seed: 5)
        var worst = 0.0
        for push in 0..<300 {
            let samples = (0..<480).map { Float(push * 480 + $0) }
            let wobbleNs = Int64(Double.random(in: -1.5e6...1.5e6, using: &generator))
            let end = UInt64(Int64(Self.timeNs(ofSample: push * 480 + 479)) + wobbleNs)
            samples.withUnsafeBufferPointer { reference.append($0, endTimeNs: end) }
            guard push >= 20 else { continue }
            var block = [Float](repeating: -1, count: 480)
            let at = push * 480 - 1000
            _ = block.withUnsafeMutableBufferPointer { reference.read(into: $0, endingAt: Self.timeNs(ofSample: at)) }
            worst = max(worst, abs(Double(block[479]) - Double(at)))
        }
        #expect(worst <= 24, "the reference was \(worst) samples off")
        #expect(reference.pausedSamples == 0)
    }

    // MARK: The delay

    @Test(arguments: [40, 137, 480])
    func theDelayIsFoundWithinTwoMilliseconds(delayMs: Int) throws {
        let probe = try EchoDelayProbe()
        let delay = delayMs * Self.rate / 1000
        let played = Self.bursts(samples: Self.rate * 3, seed: 11)
        var heard = [Float](repeating: 0, count: played.count)
        for index in delay..<played.count { heard[index] = 0.5 * played[index - delay] }
        var foundAfterMs: Int?
        for block in 0..<(played.count / 480) {
            let range = (block * 480)..<((block + 1) * 480)
            heard[range].withUnsafeBufferPointer { microphone in
                played[range].withUnsafeBufferPointer { probe.add(microphone: microphone, speakers: $0) }
            }
            if foundAfterMs == nil, probe.delaySamples != nil { foundAfterMs = (block + 1) * 10 }
        }
        let found = try #require(probe.delaySamples, "a delay found")
        #expect(abs(found - delay) <= Self.rate * 2 / 1000, "found \(found) samples for \(delay)")
        #expect(try #require(foundAfterMs) <= 1000, "found after \(foundAfterMs ?? -1) ms")
    }

    @Test func noDelayIsFoundWithoutAnEcho() throws {
        let probe = try EchoDelayProbe()
        let played = Self.bursts(samples: Self.rate * 2, seed: 11)
        let heard = Self.bursts(samples: Self.rate * 2, seed: 12)  // another signal: the near end alone
        for block in 0..<(played.count / 480) {
            let range = (block * 480)..<((block + 1) * 480)
            heard[range].withUnsafeBufferPointer { microphone in
                played[range].withUnsafeBufferPointer { probe.add(microphone: microphone, speakers: $0) }
            }
        }
        #expect(probe.delaySamples == nil)
    }

    // MARK: Through the encoder

    /// Pushes `played` in 10 ms blocks, each 40 ms before it plays, and the microphone hearing
    /// it `delayMs` after its time at half its level; returns what the microphone
    /// heard and the decoded result.
    static func run(
        _ encoder: PCMFrameEncoder, played: [Float], delayMs: Int
    ) throws -> (microphone: [Float], result: [Float]) {
        let delay = delayMs * rate / 1000
        var heard = [Float](repeating: 0, count: played.count)
        for index in delay..<played.count { heard[index] = 0.5 * played[index - delay] }
        let frames = PCMFrameEncoderTests.Frames()
        let blocks = played.count / 480
        func pushPlayback(_ block: Int) throws {
            guard block < blocks else { return }
            let start = block * 480
            let taken = try played[start..<(start + 480)].withUnsafeBytes {
                try encoder.pushPlayback($0, format: .f32, channels: 1, rate: Int32(rate), endTimeNs: timeNs(ofSample: start + 479))
            }
            #expect(taken == 480)
        }
        for block in 0..<4 { try pushPlayback(block) }
        for block in 0..<blocks {
            try pushPlayback(block + 4)
            let start = block * 480
            #expect(
                try heard[start..<(start + 480)].withUnsafeBytes {
                    try encoder.push(
                        $0, format: .f32, channels: 1, rate: Int32(rate), endTimeNs: timeNs(ofSample: start + 479),
                        deliver: frames.add)
                } == 480)
        }
        return (heard, SignalAnalysis.left(try PCMFrameEncoderTests.decode(frames.all)[...]))
    }

    static func energy(_ samples: ArraySlice<Float>) -> Double { samples.reduce(0) { $0 + Double($1) * Double($1) } }

    /// The engines that can run here: speexdsp everywhere, WebRTC's AEC3 where PipeWire's
    /// plugin has it (the Debian 13 root's lanes; Debian 12's PipeWire has webrtc 0.3).
    static let engines: [EchoEngine] = WebRTCEcho.unavailableReason == nil ? [.speexdsp, .webrtcAEC3] : [.speexdsp]

    @Test(arguments: engines)
    func theEchoOfWhatIsPlayedIsTakenOut(engine: EchoEngine) throws {
        let encoder = try PCMFrameEncoder()
        try encoder.setEchoEngine(engine)
        try encoder.setEchoCancel(true)
        let played = Self.bursts(samples: Self.rate * 8, seed: 21)
        let (microphone, result) = try Self.run(encoder, played: played, delayMs: 90)
        // The last 2 s, when the filter has learnt the path.
        let tail = (Self.rate * 6)..<(Self.rate * 8)
        let enhancementDb = 10 * log10(Self.energy(microphone[tail]) / Self.energy(result[tail]))
        let echo = try #require(encoder.counters.echo)
        print("measured: \(engine): echo of bursts of noise through a 90 ms path, the last 2 s: \(enhancementDb) dB taken out; "
            + "stats \(echo)")
        // Measured: speexdsp 62 dB (its linear filter fits a pure delay and gain exactly);
        // AEC3 23 dB (its filter converges slower on 8 s of bursts, and leaves a floor).
        #expect(enhancementDb >= (engine == .speexdsp ? 25 : 20))
        #expect(echo.engine == engine)
        #expect(abs((echo.delayMs ?? 0) - 90) <= 2, "\(echo)")
        #expect(echo.blocks == 800 && echo.blocksWithoutPlayback == 0, "\(echo)")
    }

    /// The first delay found is applied; after it, one inside the filter's reach (the echo's
    /// start in it, with 220 ms of the 300 ms tail after it) is left to the filter, which goes
    /// on with what it learnt, and one outside is applied.
    @Test func aDelayFoundInsideTheFiltersReachIsLeftToTheFilter() {
        let ms = { (milliseconds: Int) in milliseconds * Self.rate / 1000 }
        #expect(EchoCanceller.delayToApply(found: nil, applied: nil) == nil)
        #expect(EchoCanceller.delayToApply(found: ms(50), applied: nil) == ms(50))
        // Applied 100 ms: the reach runs from 60 ms, the echo may start up to 140 ms.
        for found in [60, 85, 100, 120, 140] {
            #expect(EchoCanceller.delayToApply(found: ms(found), applied: ms(100)) == nil, "\(found) ms")
        }
        for found in [0, 59, 141, 400] {
            #expect(EchoCanceller.delayToApply(found: ms(found), applied: ms(100)) == ms(found), "\(found) ms")
        }
        // Applied 20 ms: the reach runs from 0, the echo may start up to 80 ms.
        #expect(EchoCanceller.delayToApply(found: 0, applied: ms(20)) == nil)
        #expect(EchoCanceller.delayToApply(found: ms(80), applied: ms(20)) == nil)
        #expect(EchoCanceller.delayToApply(found: ms(81), applied: ms(20)) == ms(81))
    }

    @Test func theBestEngineIsAEC3WhereItRunsAndAskingForItElsewhereIsRefused() throws {
        let encoder = try PCMFrameEncoder()
        try encoder.setEchoCancel(true)
        if let reason = WebRTCEcho.unavailableReason {
            #expect(encoder.counters.echo?.engine == .speexdsp)
            #expect(throws: DeskAudioError.notSupported("WebRTC's AEC3: \(reason)")) { try encoder.setEchoEngine(.webrtcAEC3) }
            #expect(encoder.counters.echo?.engine == .speexdsp, "a refused choice changes nothing")
        } else {
            #expect(encoder.counters.echo?.engine == .webrtcAEC3)
        }
        // A running canceller goes on with the engine chosen.
        try encoder.setEchoEngine(.speexdsp)
        #expect(encoder.counters.echo?.engine == .speexdsp)
        try encoder.setEchoCancel(false)
        try encoder.setEchoCancel(true)
        #expect(encoder.counters.echo?.engine == .speexdsp, "the choice holds when turned on again")
    }

    @Test func withoutCancellationTheEchoStays() throws {
        let encoder = try PCMFrameEncoder()
        let played = Self.bursts(samples: Self.rate * 4, seed: 21)
        let (microphone, result) = try Self.run(encoder, played: played, delayMs: 90)
        let tail = (Self.rate * 2)..<(Self.rate * 4)
        let enhancementDb = 10 * log10(Self.energy(microphone[tail]) / Self.energy(result[tail]))
        #expect(abs(enhancementDb) < 1, "\(enhancementDb) dB")
        #expect(encoder.counters.echo == nil)
    }

    @Test func turningItOffAndOnLosesNoMicrophoneAudio() throws {
        let encoder = try PCMFrameEncoder()
        let frames = PCMFrameEncoderTests.Frames()
        let chunk = [Float](repeating: 0.1, count: 300)
        var pushed = 0
        for round in 0..<9 {
            if round % 3 == 1 { try encoder.setEchoCancel(round % 2 == 1) }
            pushed += try chunk.withUnsafeBytes {
                try encoder.push($0, format: .f32, channels: 1, rate: Int32(Self.rate), endTimeNs: Self.timeNs(ofSample: pushed + 299), deliver: frames.add)
            }
        }
        // 2700 samples: five whole frames, and what is short of the sixth waits.
        #expect(frames.all.count == 5 && encoder.counters.framesEncoded == 5)
        try encoder.setEchoCancel(false)
        pushed += try chunk.withUnsafeBytes {
            try encoder.push($0, format: .f32, channels: 1, rate: Int32(Self.rate), endTimeNs: Self.timeNs(ofSample: pushed + 299), deliver: frames.add)
        }
        #expect(frames.all.count == 6, "3000 samples: six frames")
    }

    @Test func badPlaybackIsRefusedAndTakesNothing() throws {
        let encoder = try PCMFrameEncoder()
        try encoder.setEchoCancel(true)
        let floats: [Float] = [0, .nan, 0, 0]
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try encoder.pushPlayback($0, format: .f32, channels: 2, rate: 48_000) }
        }
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try encoder.pushPlayback($0, format: .f32, channels: 3, rate: 48_000) }
        }
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try encoder.pushPlayback($0, format: .f32, channels: 1, rate: 4_000) }
        }
        // Off, playback is checked and dropped.
        try encoder.setEchoCancel(false)
        let good: [Float] = [0, 0.5, 0, 0.5]
        #expect(try good.withUnsafeBytes { try encoder.pushPlayback($0, format: .f32, channels: 2, rate: 48_000) } == 2)
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try encoder.pushPlayback($0, format: .f32, channels: 2, rate: 48_000) }
        }
    }
}
