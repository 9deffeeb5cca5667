import DeskAudio
import Foundation
import TestSupport
import Testing

@Suite struct OpusCodecTests {
    @Test func encodedToneDecodesAtTheSameFrequencyAndLevel() throws {
        let encoder = try OpusFrameEncoder()
        let decoder = try OpusFrameDecoder()
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 48_000)
        var decoded: [Float] = []
        var packet = [UInt8](repeating: 0, count: OpusFrameEncoder.maxPacketBytes)
        var output = [Float](repeating: 0, count: AudioFormat.frameFloats)
        for start in stride(from: 0, to: tone.count, by: AudioFormat.frameFloats) {
            let length = try tone[start..<start + AudioFormat.frameFloats].withUnsafeBufferPointer { frame in
                try packet.withUnsafeMutableBufferPointer { try encoder.encode(frame, into: $0) }
            }
            #expect(length > 0 && length <= OpusFrameEncoder.maxPacketBytes)
            let samples = try packet[0..<length].withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try decoder.decode(bytes, into: $0) }
            }
            #expect(samples == AudioFormat.frameSamples)
            decoded += output
        }
        let steady = SignalAnalysis.left(decoded[9600...])  // skip the first 100 ms
        #expect(abs(SignalAnalysis.dominantFrequency(steady) - 1000) < 20)
        let expectedLevel = 20 * log10(0.5 / 2.0.squareRoot())
        #expect(abs(SignalAnalysis.rmsDecibels(steady) - expectedLevel) < 1)
    }

    @Test func restrictedLowDelayHas2_5msLookahead() throws {
        #expect(try OpusFrameEncoder().lookahead == 120)
        #expect(try OpusFrameEncoder(application: .audio).lookahead == 312)
    }

    @Test func bitrateAndComplexityAreValidated() throws {
        let encoder = try OpusFrameEncoder()
        #expect(encoder.bitrate == 128_000)
        try encoder.setBitrate(64_000)
        #expect(encoder.bitrate == 64_000)
        #expect(throws: DeskAudioError.self) { try encoder.setBitrate(5_999) }
        #expect(throws: DeskAudioError.self) { try encoder.setBitrate(510_001) }
        #expect(throws: DeskAudioError.self) { try encoder.setComplexity(11) }
        #expect(throws: DeskAudioError.self) { try OpusFrameEncoder(bitrate: 1) }
        #expect(encoder.bitrate == 64_000)
    }

    @Test func concealmentFillsALostFrame() throws {
        let decoder = try OpusFrameDecoder()
        var output = [Float](repeating: 1, count: AudioFormat.frameFloats)
        let samples = try output.withUnsafeMutableBufferPointer { try decoder.decode(nil, into: $0) }
        #expect(samples == AudioFormat.frameSamples)
    }
}
