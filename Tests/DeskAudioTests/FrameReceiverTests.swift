import DeskAudio
import Foundation
import TestSupport
import Testing

@Suite struct FrameReceiverTests {
    /// AudioFrame bytes for `input`, encoded by the real pipeline (framer, gate, libopus).
    static func encode(_ input: [Float], duration: FrameDuration = .ms10) throws -> [[UInt8]] {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder(), frameDuration: duration)
        var frames: [[UInt8]] = []
        input.withUnsafeBufferPointer { chunk in
            pipeline.process(chunk, endTimeNs: 0) { frames.append(Array($0)) }
        }
        return frames
    }

    /// Feeds `frames` to `receiver`; returns what it wrote, appended, and each call's count.
    static func receive(_ frames: [[UInt8]], by receiver: FrameReceiver) throws -> ([Float], [Int]) {
        var output = [Float](repeating: 0, count: FrameReceiver.outputFloatsNeeded)
        var decoded: [Float] = []
        var counts: [Int] = []
        for frame in frames {
            let samples = try frame.withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
            }
            decoded += output[0..<(samples * 2)]
            counts.append(samples)
        }
        return (decoded, counts)
    }

    static let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 100 * 480)

    @Test func everyFrameDecodesToTheToneWithNothingConcealed() throws {
        let frames = try Self.encode(Self.tone)
        let receiver = try FrameReceiver()
        let (decoded, counts) = try Self.receive(frames, by: receiver)
        #expect(counts == [Int](repeating: 480, count: 100))
        #expect(receiver.counters.framesDecoded == 100)
        #expect(receiver.counters.framesLost == 0 && receiver.counters.framesConcealed == 0)
        let level = SignalAnalysis.rmsDecibels(SignalAnalysis.left(decoded[9600...]))
        #expect(abs(level - 20 * log10(0.5 / 2.0.squareRoot())) < 0.5, "level \(level)")
    }

    @Test func aHoleInTheSequenceIsConcealedBeforeTheNextFrameKeepingTheTimeline() throws {
        var frames = try Self.encode(Self.tone)
        frames.removeSubrange(40..<43)  // three frames lost in transit
        let receiver = try FrameReceiver()
        let (decoded, counts) = try Self.receive(frames, by: receiver)
        #expect(counts[40] == 4 * 480, "three concealed frames, then the frame itself")
        #expect(decoded.count == 100 * 960, "the timeline has no hole")
        #expect(receiver.counters.framesLost == 3 && receiver.counters.framesConcealed == 3)
        // Concealment continues the tone: the concealed stretch is not silence.
        let concealed = SignalAnalysis.left(decoded[(40 * 960)..<(43 * 960)])
        #expect(SignalAnalysis.toneLevelDecibels(concealed, frequency: 1000) > -30)
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(decoded[9600...])) - 1000) < 10)
    }

    @Test func aLateOrRepeatedFrameIsDroppedAndCounted() throws {
        var frames = try Self.encode(Self.tone)
        frames.insert(frames[5], at: 7)  // frame 5 again, after frame 6
        let receiver = try FrameReceiver()
        let (decoded, counts) = try Self.receive(frames, by: receiver)
        #expect(counts[7] == 0)
        #expect(receiver.counters.framesLate == 1 && receiver.counters.framesLost == 0)
        #expect(decoded.count == 100 * 960)
    }

    @Test func aGatedSilenceIsNotConcealed() throws {
        let silence = [Float](repeating: 0, count: 900 * AudioFormat.frameFloats)
        let frames = try Self.encode(Self.tone + silence + Self.tone)
        #expect(frames.count == 100 + 800 + 100, "the gate held 100 frames back")
        let receiver = try FrameReceiver()
        let (decoded, counts) = try Self.receive(frames, by: receiver)
        #expect(counts.allSatisfy { $0 == 480 })
        #expect(receiver.counters.gaps == 1 && receiver.counters.framesConcealed == 0)
        #expect(decoded.count == 1000 * 960)
    }

    @Test func aHoleLongerThan100msIsNotConcealed() throws {
        var frames = try Self.encode(Self.tone)
        frames.removeSubrange(20..<32)  // 120 ms
        let receiver = try FrameReceiver()
        let (_, counts) = try Self.receive(frames, by: receiver)
        #expect(counts[20] == 480)
        #expect(receiver.counters.framesLost == 12 && receiver.counters.framesConcealed == 0)
    }

    @Test func concealmentIsCutToTheOutputGivenNeverTheFrame() throws {
        var frames = try Self.encode(Self.tone)
        frames.removeSubrange(10..<14)
        let receiver = try FrameReceiver()
        var output = [Float](repeating: 0, count: 2 * 960)
        var counts: [Int] = []
        for frame in frames {
            counts.append(
                try frame.withUnsafeBytes { bytes in
                    try output.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
                })
        }
        #expect(counts[10] == 960, "room for one concealed frame and the frame")
        #expect(receiver.counters.framesLost == 4 && receiver.counters.framesConcealed == 1)
    }

    @Test func badBytesAndTooSmallOutputAreRefusedWithoutChangingState() throws {
        let frames = try Self.encode(Self.tone)
        let receiver = try FrameReceiver()
        var output = [Float](repeating: 0, count: FrameReceiver.outputFloatsNeeded)
        var corrupt = frames[0]
        corrupt[0] = 0x58
        #expect(throws: DeskAudioError.invalidFrame(.wrongMagic)) {
            try corrupt.withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
            }
        }
        var small = [Float](repeating: 0, count: 100)
        #expect(throws: DeskAudioError.self) {
            try frames[0].withUnsafeBytes { bytes in
                try small.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
            }
        }
        #expect(receiver.counters.framesDecoded == 0 && receiver.counters.framesLate == 0)
        let (_, counts) = try Self.receive(Array(frames[0..<3]), by: receiver)
        #expect(counts == [480, 480, 480], "nothing was taken for lost")
    }

    /// The concealment limit is 100 ms of audio, whatever the frame length: 40 lost frames of
    /// 2.5 ms or 5 of 20 ms are concealed; one more is played as a jump.
    @Test(arguments: [(FrameDuration.ms2_5, 40), (.ms20, 5)])
    func holesUpTo100msOfFramesOfAnyLengthAreConcealed(duration: FrameDuration, limit: Int) throws {
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 48_000)
        let frames = try Self.encode(tone, duration: duration)
        for lost in [limit, limit + 1] {
            var arrived = frames
            arrived.removeSubrange(20..<(20 + lost))
            let receiver = try FrameReceiver()
            let (decoded, counts) = try Self.receive(arrived, by: receiver)
            #expect(receiver.counters.framesLost == UInt64(lost))
            let concealed = lost == limit
            #expect(receiver.counters.framesConcealed == (concealed ? UInt64(lost) : 0))
            #expect(counts[20] == (concealed ? lost + 1 : 1) * duration.samples)
            #expect(decoded.count == (concealed ? frames.count : frames.count - lost) * duration.floats)
        }
    }
}
