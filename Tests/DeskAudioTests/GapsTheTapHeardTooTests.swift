import Foundation
import Testing
import TestSupport

/// The tone judge's account of silence on the sink itself: a gap of ours that the tap, another
/// recorder of the same monitor, heard at the same place (R-RIG-PLAYER).
@Suite struct GapsTheTapHeardTooTests {
    /// Stereo: `lead` samples of silence, 1 s of tone with `gap` samples of zeros from 0.5 s
    /// (a player's missed periods), 100 ms of silence.
    static func recording(lead: Int, gap: Int, at start: Int = 24_000) -> ToneCheck {
        let mono = [Float](repeating: 0, count: lead) + ToneBreakTests.tone(0..<start) + [Float](repeating: 0, count: gap)
            + ToneBreakTests.tone((start + gap)..<48_000) + [Float](repeating: 0, count: 4_800)
        return ToneCheck(mono.flatMap { [$0, $0] })
    }

    static func gaps(of check: ToneCheck) -> [[Int]] { check.gaps(below: 20 * log10(0.5 / 2.0.squareRoot())) }

    @Test func aGapTheTapHeardAtTheSamePlaceIsTheTaps() {
        // Ours started recording 20 ms before the tone, the tap 300 ms before it: the same 140 ms gap.
        let ours = Self.recording(lead: 960, gap: 6_720)
        let tap = Self.recording(lead: 14_400, gap: 6_720)
        let gaps = Self.gaps(of: ours)
        #expect(gaps.count == 1 && (14...15).contains(gaps[0].count), "\(gaps)")
        #expect(ours.blocks(in: gaps, alsoIn: Self.gaps(of: tap), of: tap) == gaps[0].count)
    }

    /// A player's missed periods delay the rest of its tone: the sound comes out longer by
    /// them, whatever a tap heard (R-TAP-STARVED). Zeros in place of part of it do not.
    @Test func silenceThatDelaysTheRestOfTheToneLengthensIt() {
        for lead in [960, 500] {
            let delayed = [Float](repeating: 0, count: lead) + ToneBreakTests.tone(0..<24_000)
                + [Float](repeating: 0, count: 6_720) + ToneBreakTests.tone(24_000..<48_000) + [Float](repeating: 0, count: 4_800)
            // 140 ms: 14 blocks, less the one allowed for where the ends fall.
            #expect((13...14).contains(ToneCheck(delayed.flatMap { [$0, $0] }).blocksLonger(thanPlayed: 1)), "lead \(lead)")
        }
        #expect(Self.recording(lead: 960, gap: 0).blocksLonger(thanPlayed: 1) == 0)
        #expect(Self.recording(lead: 500, gap: 6_720).blocksLonger(thanPlayed: 1) == 0, "zeros in place of the tone")
    }

    @Test func aGapOfTheTapsElsewhereIsNot() {
        let ours = Self.recording(lead: 960, gap: 6_720)
        let tap = Self.recording(lead: 14_400, gap: 6_720, at: 9_600)
        #expect(ours.blocks(in: Self.gaps(of: ours), alsoIn: Self.gaps(of: tap), of: tap) == 0)
    }

    @Test func aLongerGapOfOursCountsOnlyTheTapsLengthAndABlockEitherSide() {
        let ours = Self.recording(lead: 960, gap: 14_400)
        let tap = Self.recording(lead: 14_400, gap: 2_400)
        let tapGaps = Self.gaps(of: tap)
        let tapBlocks = tapGaps.reduce(0) { $0 + $1.count }
        #expect(ours.blocks(in: Self.gaps(of: ours), alsoIn: tapGaps, of: tap) == tapBlocks + 2)
    }

    @Test func eachGapOfTheTapsCountsOnce() {
        let ours = Self.recording(lead: 960, gap: 6_720)
        let tap = Self.recording(lead: 14_400, gap: 6_720)
        let gaps = Self.gaps(of: ours)
        #expect(ours.blocks(in: gaps + gaps, alsoIn: Self.gaps(of: tap), of: tap) == gaps[0].count)
    }
}
