import Glibc
import TestSupport
import Testing

/// The tone judges' level: frames a jitter buffer drops evenly (one every 160 ms, 11 in 1.9 s,
/// as the remote microphone's buffer shed a backlog in the clean-clone run of 8b6e803) shift
/// the tone's phase inside many 100 ms blocks, which the median of such blocks reads as a
/// lower level; 20 ms blocks keep it (R-JB-PHASE). Gaps a loaded server makes in one of two
/// mixed tones lower their own blocks, not the tone's level in the others (R-MIX-GAPS).
@Suite struct ToneLevelTests {
    /// 1.9 s of a 440 Hz sine at amplitude 0.3 with every 16th 10 ms frame taken out (11 of them).
    static let toneWithFramesDropped: [Float] = {
        let whole = SignalAnalysis.left(SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 2 * 48_000)[...])
        let kept = stride(from: 0, to: whole.count / 480, by: 1).filter { !($0 >= 16 && ($0 - 11) % 16 == 0) }
        return Array(kept.flatMap { whole[($0 * 480)..<(($0 + 1) * 480)] }.prefix(48_000 * 19 / 10))
    }()
    static let played = 20 * log10(0.3 / 2.0.squareRoot())

    @Test func framesDroppedEvenlyLowerTheMedianOf100MillisecondBlocks() {
        let level = SignalAnalysis.medianBlockLevel(Self.toneWithFramesDropped[...], frequency: 440)
        #expect(level < Self.played - 0.5, "100 ms blocks: \(level - Self.played) dB")
    }

    @Test func twentyMillisecondBlocksKeepTheTonesLevel() {
        let level = SignalAnalysis.medianBlockLevel(Self.toneWithFramesDropped[...], frequency: 440, block: 960)
        #expect(abs(level - Self.played) < 0.05, "20 ms blocks: \(level - Self.played) dB")
    }

    /// 2 s of 1 kHz at 0.3 mixed with 440 Hz at `amplitude`, stereo, with the 440 Hz tone
    /// silent in every 10 ms frame `gaps` holds (as when the server skips the microphone's
    /// cycles).
    static func mixed(micAmplitude amplitude: Float, gaps: Set<Int>) -> [Float] {
        let app = SignalAnalysis.sine(frequency: 1000, amplitude: 0.3, frames: 2 * 48_000)
        let mic = SignalAnalysis.sine(frequency: 440, amplitude: amplitude, frames: 2 * 48_000)
        return app.indices.map { app[$0] + (gaps.contains($0 / 960) ? 0 : mic[$0]) }
    }

    // A 600 ms stall and, every 100 ms before it, a 30 ms gap: more than half the 100 ms blocks broken.
    static let serverGaps = Set(80..<140).union(stride(from: 20, to: 80, by: 10).flatMap { [$0, $0 + 1, $0 + 2] })

    @Test func aMixedTonesGapsLowerOnlyTheirOwnBlocks() throws {
        let samples = Self.mixed(micAmplitude: 0.3, gaps: Self.serverGaps)
        let stretch = try #require(SignalAnalysis.steadyStretch(samples, frequency: 440))
        let hundredMs = SignalAnalysis.medianBlockLevel(SignalAnalysis.left(samples[...])[stretch], frequency: 440)
        #expect(hundredMs < Self.played - 3, "100 ms blocks over the stretch: \(hundredMs - Self.played) dB")
        let mic = SignalAnalysis.toneInItsBlocks(samples, frequency: 440)
        #expect(abs(mic.level - Self.played) < 0.1, "its own 20 ms blocks: \(mic.level - Self.played) dB")
        #expect((40...50).contains(mic.lowBlocks), "\(mic.lowBlocks) of \(mic.blocks) blocks low")
        let app = SignalAnalysis.toneInItsBlocks(samples, frequency: 1000)
        #expect(abs(app.level - Self.played) < 0.1 && app.lowBlocks == 0, "1 kHz: \(app)")
    }

    @Test func aMixedToneAtTheWrongLevelIsReadSoInEveryBlock() {
        let mic = SignalAnalysis.toneInItsBlocks(Self.mixed(micAmplitude: 0.15, gaps: []), frequency: 440)
        #expect(abs(mic.level - (Self.played - 6.02)) < 0.1 && mic.lowBlocks == 0, "\(mic)")
    }
}
