import Foundation
import Testing
import TestSupport

/// The tone judge's excuse for a gap of ours: the tap's tone broke near it, with no gap of its own.
@Suite struct GapsNearTapBreaksTests {
    static let silence = [Float](repeating: 0, count: 4_800)

    /// Stereo from mono: 100 ms of silence, then `samples`, then 100 ms of silence.
    static func recording(_ samples: [Float]) -> [Float] {
        (silence + samples + silence).flatMap { [$0, $0] }
    }

    // Ours: 1 s of tone with 240 samples (5 ms) of zeros put in at 0.95 s (a 10 ms block
    // 3.5 dB low, as in the clean-clone CI run that had it).
    static var ours: ToneCheck {
        ToneCheck(recording(ToneBreakTests.tone(0..<45_600) + [Float](repeating: 0, count: 240) + ToneBreakTests.tone(45_600..<72_000)))
    }

    static func gaps(of check: ToneCheck) -> [[Int]] { check.gaps(below: 20 * log10(0.5 / 2.0.squareRoot())) }

    @Test func aCycleTheTapLostAtTheSamePlaceExcusesIt() {
        // The tap lost 64 samples within a few ms of ours: a phase jump, no gap.
        let tap = ToneCheck(Self.recording(ToneBreakTests.tone(0..<45_700) + ToneBreakTests.tone(45_764..<72_064)))
        #expect(Self.gaps(of: Self.ours).count == 1 && Self.gaps(of: tap).isEmpty)
        #expect(Self.ours.gaps(Self.gaps(of: Self.ours), nearBreaksOf: tap, outside: [], frequency: 1000) == 1)
    }

    @Test func aBreakOfTheTapElsewhereDoesNot() {
        let tap = ToneCheck(Self.recording(ToneBreakTests.tone(0..<20_000) + ToneBreakTests.tone(20_064..<72_064)))
        #expect(!ToneBreak.find(in: tap.interior, frequency: 1000).isEmpty, "the tap's break is found")
        #expect(Self.ours.gaps(Self.gaps(of: Self.ours), nearBreaksOf: tap, outside: [], frequency: 1000) == 0)
    }

    @Test func anUnbrokenTapExcusesNothing() {
        let tap = ToneCheck(Self.recording(ToneBreakTests.tone(0..<72_000)))
        #expect(Self.ours.gaps(Self.gaps(of: Self.ours), nearBreaksOf: tap, outside: [], frequency: 1000) == 0)
    }
}
