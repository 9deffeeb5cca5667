@testable import DeskAudio
import TestSupport
import Testing

@Suite struct HostPCMInputTests {
    static func s16(_ samples: [Float]) -> [Int16] { samples.map { Int16(($0 * 32767).rounded()) } }

    static func drain(_ ring: SampleRing) -> [Float] {
        var out = [Float](repeating: 0, count: ring.availableFloats)
        _ = out.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        return out
    }

    @Test(arguments: [8_000, 11_025, 16_000, 22_050, 44_100, 48_000, 96_000])
    func monoS16AtAnyRateComesOutAs48kHzStereoAtItsFrequencyAndLevel(rate: Int) throws {
        let input = HostPCMInput()
        let seconds = 0.5
        // sine() counts time at 48 kHz: scale the frequency so it is 1 kHz at `rate`.
        let tone = SignalAnalysis.sine(
            frequency: 1000 * 48_000 / Double(rate), amplitude: 0.5, frames: Int(Double(rate) * seconds))
        let mono = Self.s16(stride(from: 0, to: tone.count, by: 2).map { tone[$0] })
        var taken = 0
        var offset = 0
        for size in [1, 333, 47, 2000, 10_000] where offset < mono.count {  // uneven pushes
            let count = min(size, mono.count - offset)
            taken += try mono[offset..<(offset + count)].withUnsafeBytes {
                try input.push($0, format: .s16, channels: 1, rate: Int32(rate))
            }
            offset += count
        }
        taken += try mono[offset...].withUnsafeBytes { try input.push($0, format: .s16, channels: 1, rate: Int32(rate)) }
        #expect(taken == mono.count)
        let out = Self.drain(input.ring)
        let frames = out.count / 2
        #expect(abs(frames - 24_000) < 200, "0.5 s at 48 kHz: \(frames) frames")
        let left = stride(from: 0, to: out.count, by: 2).map { out[$0] }
        let right = stride(from: 1, to: out.count, by: 2).map { out[$0] }
        #expect(left == right, "mono is spread to both channels")
        let steady = Array(out[2000..<(out.count - 2000)])
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(steady[...])) - 1000) < 2)
        #expect(abs(SignalAnalysis.rmsDecibels(steady) - -9.03) < 0.1, "level kept at \(rate) Hz")
    }

    @Test func badInputThrowsAndTakesNothing() throws {
        let input = HostPCMInput()
        var floats: [Float] = [0.1, 0.2, .nan, 0.3]
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try input.push($0, format: .f32, channels: 2, rate: 48_000) }
        }
        floats[2] = .infinity
        #expect(throws: DeskAudioError.self) {
            try floats.withUnsafeBytes { try input.push($0, format: .f32, channels: 2, rate: 48_000) }
        }
        let samples = [Int16](repeating: 100, count: 9)
        #expect(throws: DeskAudioError.self) {  // 18 bytes are not whole stereo s16 frames
            try samples.withUnsafeBytes { try input.push($0, format: .s16, channels: 2, rate: 48_000) }
        }
        for (channels, rate) in [(Int32(3), Int32(48_000)), (0, 48_000), (2, 7_999), (2, 96_001), (1, -1)] {
            #expect(throws: DeskAudioError.self) {
                try samples.withUnsafeBytes { try input.push($0, format: .s16, channels: channels, rate: rate) }
            }
        }
        let huge = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: 0x1000), count: 960_001 * 4)
        #expect(throws: DeskAudioError.self) { try input.push(huge, format: .s16, channels: 2, rate: 48_000) }
        #expect(input.ring.availableFloats == 0, "nothing was taken")
    }

    @Test func aFullQueueTakesPartOfAPushAndLosesNothingTaken() throws {
        let input = HostPCMInput()
        let tone = SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 48_000 * 3)
        let taken = try tone.withUnsafeBytes { try input.push($0, format: .f32, channels: 2, rate: 48_000) }
        #expect(taken > 40_000 && taken < 48_000 * 2, "about the 1 s queue: \(taken)")
        let queued = input.ring.availableFloats / 2
        #expect(abs(queued - taken) < 64, "what was taken is queued: \(queued) vs \(taken)")
        #expect(input.ring.droppedFloats == 0)
        // The rest goes in once the worker has read.
        _ = Self.drain(input.ring)
        let rest = try tone[(taken * 2)...].withUnsafeBytes {
            try input.push($0, format: .f32, channels: 2, rate: 48_000)
        }
        #expect(rest > 0)
    }
}
