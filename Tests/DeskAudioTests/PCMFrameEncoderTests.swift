@testable import DeskAudio
import Glibc
import TestSupport
import Testing

/// The viewer-side encoder: PCM in any supported shape becomes AudioFrames a host's decoder
/// plays back at the tone's frequency and level, unbroken.
@Suite struct PCMFrameEncoderTests {
    /// Every frame `push` hands over, as bytes.
    final class Frames {
        var all: [[UInt8]] = []
        func add(_ frame: UnsafeRawBufferPointer) { all.append(Array(frame)) }
    }

    /// A 1 kHz tone at `amplitude` and `rate`, `seconds` long, interleaved in `channels`.
    static func tone(rate: Int, channels: Int, seconds: Double, amplitude: Float = 0.25) -> [Float] {
        // sine() counts time at 48 kHz: scale the frequency so it is 1 kHz at `rate`.
        let stereo = SignalAnalysis.sine(
            frequency: 1000 * 48_000 / Double(rate), amplitude: amplitude, frames: Int(Double(rate) * seconds))
        return channels == 2 ? stereo : SignalAnalysis.left(stereo[...])
    }

    /// Pushes `samples` in uneven chunks; returns the frames taken.
    static func pushUnevenly<Sample>(
        _ samples: [Sample], _ encoder: PCMFrameEncoder, format: HostPCMInput.SampleFormat, channels: Int, rate: Int,
        into frames: Frames
    ) throws -> Int {
        var taken = 0
        var offset = 0
        var sizes = [1, 137, 441, 3, 2000, 999].makeIterator()
        while offset < samples.count / channels {
            let count = min(sizes.next() ?? 4410, samples.count / channels - offset)
            taken += try samples[(offset * channels)..<((offset + count) * channels)].withUnsafeBytes {
                // Captured in real time from t = 1 s: the chunk ends at its last sample's time.
                try encoder.push(
                    $0, format: format, channels: Int32(channels), rate: Int32(rate),
                    endTimeNs: 1_000_000_000 + UInt64(offset + count) * 1_000_000_000 / UInt64(rate), deliver: frames.add)
            }
            offset += count
        }
        return taken
    }

    /// Decodes `frames` with the receiving side's FrameReceiver.
    static func decode(_ frames: [[UInt8]]) throws -> [Float] {
        let receiver = try FrameReceiver()
        var pcm: [Float] = []
        var output = [Float](repeating: 0, count: FrameReceiver.outputFloatsNeeded)
        for frame in frames {
            let samples = try frame.withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
            }
            pcm += output[0..<(samples * 2)]
        }
        return pcm
    }

    @Test(arguments: [
        (8_000, 1, HostPCMInput.SampleFormat.s16), (16_000, 1, .s16), (44_100, 2, .s16), (48_000, 2, .f32),
        (96_000, 1, .f32),
    ])
    func anyShapeOfPCMDecodesToItsToneUnbroken(rate: Int, channels: Int, format: HostPCMInput.SampleFormat) throws {
        let encoder = try PCMFrameEncoder()
        let frames = Frames()
        let tone = Self.tone(rate: rate, channels: channels, seconds: 1)
        let taken: Int
        if format == .s16 {
            let samples = tone.map { Int16(($0 * 32767).rounded()) }
            taken = try Self.pushUnevenly(samples, encoder, format: .s16, channels: channels, rate: rate, into: frames)
        } else {
            taken = try Self.pushUnevenly(tone, encoder, format: .f32, channels: channels, rate: rate, into: frames)
        }
        #expect(taken == rate)
        // 1 s at 48 kHz, less the resampler's delay and the part of a frame still waiting.
        #expect((98...100).contains(frames.all.count), "\(frames.all.count) frames")
        let headers = try frames.all.map { frame in try frame.withUnsafeBytes { try AudioFrameParser.parse($0).header } }
        #expect(headers.map(\.sequence) == Array(0..<UInt32(headers.count)))
        #expect(headers.map(\.sampleClock) == (0..<UInt64(headers.count)).map { $0 * 480 })
        #expect(headers.allSatisfy { $0.flags == [.mic] })
        // Capture times 10 ms apart (±0.2 ms: they follow the chunks' times through the resampler).
        let steps = zip(headers, headers.dropFirst()).map { Int64($1.captureTimeNs) - Int64($0.captureTimeNs) }
        #expect(steps.allSatisfy { abs($0 - 10_000_000) <= 200_000 }, "\(steps.filter { abs($0 - 10_000_000) > 200_000 })")
        #expect(headers[0].captureTimeNs > 999_900_000 && headers[0].captureTimeNs < 1_002_000_000, "\(headers[0].captureTimeNs)")

        let decoded = try Self.decode(frames.all)
        let steady = Array(decoded[9600..<(decoded.count - 960)])  // past the onset
        let left = SignalAnalysis.left(steady[...])
        #expect(abs(SignalAnalysis.dominantFrequency(left) - 1000) < 2)
        let expected = 20 * log10(0.25 / 2.0.squareRoot())
        let level = SignalAnalysis.toneLevelDecibels(left, frequency: 1000)
        #expect(abs(level - expected) <= 1, "\(rate) Hz \(channels) ch \(format): \(level) dBFS, not \(expected)")
        // Unbroken: every 10 ms of the steady part holds the tone within 1 dB.
        for start in stride(from: 0, to: left.count - 480, by: 480) {
            let block = SignalAnalysis.toneLevelDecibels(Array(left[start..<(start + 480)]), frequency: 1000)
            #expect(abs(block - expected) <= 1, "block at \(start): \(block) dBFS")
        }
    }

    @Test func theZeroGateHoldsBackLongSilenceAndTheToneAfterItIsFlagged() throws {
        let encoder = try PCMFrameEncoder()
        let frames = Frames()
        let silence = [Float](repeating: 0, count: 48_000 * 2)  // 1 s, 100 frames
        for _ in 0..<10 {
            _ = try silence.withUnsafeBytes { try encoder.push($0, format: .f32, channels: 2, rate: 48_000, deliver: frames.add) }
        }
        #expect(frames.all.count == ZeroGate.defaultZeroFramesSent)
        let tone = Self.tone(rate: 48_000, channels: 2, seconds: 0.1)
        _ = try tone.withUnsafeBytes { try encoder.push($0, format: .f32, channels: 2, rate: 48_000, deliver: frames.add) }
        let first = try frames.all[800].withUnsafeBytes { try AudioFrameParser.parse($0).header }
        #expect(first.flags == [.mic, .afterGap])
        #expect(first.sampleClock == 1000 * 480, "the clock ran on through the held frames")
        let counters = encoder.counters
        #expect(counters.framesGated == 200 && counters.framesSent == UInt64(frames.all.count))
    }

    @Test func badInputIsRefusedAndLosesNothingAlreadyTaken() throws {
        let encoder = try PCMFrameEncoder()
        let frames = Frames()
        let tone = Self.tone(rate: 48_000, channels: 2, seconds: 0.015)  // a frame and a half
        _ = try tone.withUnsafeBytes { try encoder.push($0, format: .f32, channels: 2, rate: 48_000, deliver: frames.add) }
        #expect(frames.all.count == 1)
        let bad: [(Int32, Int32, [Float], String)] = [
            (3, 48_000, [0, 0, 0], "channels must be 1 or 2, not 3"),
            (2, 7_999, [0, 0], "sample rate 7999 Hz is outside 8000…96000 Hz"),
            (2, 48_000, [0], "4 bytes are not whole frames of 8 bytes"),
            (2, 48_000, [0, .nan], "sample 1 is nan: floats must be finite"),
        ]
        for (channels, rate, samples, message) in bad {
            do {
                _ = try samples.withUnsafeBytes {
                    try encoder.push($0, format: .f32, channels: channels, rate: rate, deliver: frames.add)
                }
                Issue.record("accepted: \(message)")
            } catch {
                #expect((error as? DeskAudioError)?.message == message)
            }
        }
        #expect(frames.all.count == 1, "nothing was encoded from refused input")
        // The half frame taken before is still there: half a frame more completes it.
        let more = Self.tone(rate: 48_000, channels: 2, seconds: 0.005)
        _ = try more.withUnsafeBytes { try encoder.push($0, format: .f32, channels: 2, rate: 48_000, deliver: frames.add) }
        #expect(frames.all.count == 2)
    }

    @Test func captureTimesEndAtTheGivenTimeAndAGapIsMarked() throws {
        let encoder = try PCMFrameEncoder()
        let frames = Frames()
        let tone = Self.tone(rate: 48_000, channels: 2, seconds: 0.1)  // exactly 10 frames
        let end: UInt64 = 5_000_000_000
        _ = try tone.withUnsafeBytes {
            try encoder.push($0, format: .f32, channels: 2, rate: 48_000, endTimeNs: end, deliver: frames.add)
        }
        let headers = try frames.all.map { frame in try frame.withUnsafeBytes { try AudioFrameParser.parse($0).header } }
        #expect(headers.count == 10)
        #expect(headers.last?.captureTimeNs == end - 10_000_000, "the last frame began 10 ms before the end")
        #expect(headers.first?.captureTimeNs == end - 100_000_000)
        encoder.markDiscontinuity(skippedSamples: 4800)
        _ = try tone.withUnsafeBytes { try encoder.push($0, format: .f32, channels: 2, rate: 48_000, deliver: frames.add) }
        let after = try frames.all[10].withUnsafeBytes { try AudioFrameParser.parse($0).header }
        #expect(after.flags.contains(.afterGap) && after.sampleClock == 10 * 480 + 4800 && after.sequence == 10)
    }
}
