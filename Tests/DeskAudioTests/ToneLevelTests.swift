import Glibc
import TestSupport
import Testing

/// The tone judges' level: frames a jitter buffer drops evenly (one every 160 ms, 11 in 1.9 s,
/// as the remote microphone's buffer shed a backlog in the clean-clone run of 8b6e803) shift
/// the tone's phase inside many 100 ms blocks, which the median of such blocks reads as a
/// lower level; 20 ms blocks keep it (R-JB-PHASE).
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
}
