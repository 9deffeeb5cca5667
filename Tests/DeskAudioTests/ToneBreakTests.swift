import Foundation
import Testing
import TestSupport

/// The test helper that tells, sample by sample, what happened where a tone broke.
@Suite struct ToneBreakTests {
    static func tone(_ range: Range<Int>) -> [Float] {
        range.map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 48_000)) }
    }

    @Test func anUnbrokenToneHasNoBreak() {
        #expect(ToneBreak.find(in: Self.tone(0..<48_000), frequency: 1000).isEmpty)
    }

    @Test func silencePutInIsAPause() throws {
        let samples = Self.tone(0..<9_600) + [Float](repeating: 0, count: 64) + Self.tone(9_600..<19_200)
        let found = ToneBreak.find(in: samples, frequency: 1000)
        let only = try #require(found.count == 1 ? found.first : nil, "\(found)")
        // The tone went on where it stopped: 64 samples late, 16 modulo its 48-sample period.
        #expect(abs(only.shiftSamples - 16) <= 2 && only.lengthSamples > 0, "\(only)")
        #expect(abs(only.startSample - 9_600) <= 48, "\(only)")
    }

    @Test func silenceOverAudioIsAudioReplaced() throws {
        var samples = Self.tone(0..<19_200)
        for index in 9_600..<9_664 { samples[index] = 0 }
        let found = ToneBreak.find(in: samples, frequency: 1000)
        let only = try #require(found.count == 1 ? found.first : nil, "\(found)")
        #expect(abs(only.shiftSamples) <= 3 && only.lengthSamples > 0, "\(only)")
    }

    @Test func audioCutOutIsAJumpAhead() throws {
        let samples = Self.tone(0..<9_600) + Self.tone(9_620..<19_200)
        let found = ToneBreak.find(in: samples, frequency: 1000)
        let only = try #require(found.count == 1 ? found.first : nil, "\(found)")
        #expect(only.lengthSamples == 0 && abs(only.shiftSamples + 20) <= 1, "\(only)")
    }

    @Test func aQuietStartIsNotABreakAndTheBreaksAfterItAreFound() throws {
        let samples = [Float](repeating: 0, count: 480) + Self.tone(0..<9_600) + [Float](repeating: 0, count: 64)
            + Self.tone(9_600..<19_200)
        let found = ToneBreak.find(in: samples, frequency: 1000)
        let only = try #require(found.count == 1 ? found.first : nil, "\(found)")
        #expect(abs(only.shiftSamples - 16) <= 2, "\(only)")
    }
}
