/// Every threshold that decides what time a sample sounded, in one value, each with its
/// reason in a line (the measurements behind them: docs/capture.md, docs/reliability.md).
/// The timing types read `TimingPolicy.standard`; nothing else sets one.
struct TimingPolicy: Sendable {
    /// A server-clock report this far off the line starts it again (a stall, a skip, a restart).
    var clockRelockNs = 20_000_000.0
    /// The smallest step a report off the line is taken as (one PipeWire quantum is 2.7 or 5.3 ms).
    var clockStepFloorNs = 1_000_000.0
    /// A report this many times the reports' jitter off the line is a step, not jitter.
    var clockStepJitters = 8.0
    /// After an arrival line settles, a sample's time moves at most this much per 10 ms frame.
    var arrivalSlewPerFrameNs = 20_000.0
    /// The largest skip threshold for arrivals: half a 256-sample quantum, above a settled stream's straying.
    var skipStepLargestNs = 2_500_000.0
    /// The smallest: above what the least report of a stream read every 32 samples strays.
    var skipStepSmallestNs = 500_000.0
    /// Every report of 100 ms this much late is a large skip: between one 256-sample cycle and two.
    var largeSkipNs = 7_500_000.0
    /// A PipeWire position jump the cycles' own times disagree with by more than this (or a
    /// cycle's duration) is no skip: the driver changed.
    var cycleJumpToleranceNs = 4_000_000.0
    /// Frames on a server clock more than this off the last one's time plus its length carry TIME_STEP.
    var frameStepToleranceNs = 50_000.0
    /// ... and while the line locks (through the PulseAudio API it moves frames 0.05–0.17 ms then).
    var lockingFrameStepToleranceNs = 500_000.0
    /// How long a new line locks for: about as long as the estimator's loop narrows.
    var lockingSamples = UInt64(2 * AudioFormat.sampleRate)
    /// The longest skip filled with silence (half the ring); longer, the capture clock starts again.
    var longestSkipFilledSamples = AudioFormat.sampleRate / 4
    /// A new plain-PulseAudio stream's audio waits up to this for the first mark (R-PULSE-FIRST-MARK).
    var pulseFirstMarkHoldSamples = AudioFormat.sampleRate / 20
    /// Exact zeros alone between sound in one cycle, or in a run this short, are counted as the
    /// server's (R-PW-ZERO-CYCLE: one 256-sample cycle; two of 128); a longer run is a pause.
    var serverZeroRunLongestSamples = 256
    /// How often plain PulseAudio is asked for a timing snapshot once one was taken.
    var pulseSnapshotIntervalNs: UInt64 = 100_000_000
    /// A snapshot whose round trip took longer is not taken: its stamp is at most that late.
    var pulseLongestRoundTripNs: UInt64 = 1_000_000

    /// The values the library runs with.
    static let standard = TimingPolicy()
}
