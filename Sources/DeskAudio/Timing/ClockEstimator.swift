import Glibc

/// Fits a line through (sample position, CLOCK_MONOTONIC time) reports of one audio clock: a
/// delay-locked loop, as audio servers use to follow a sound card. Each report moves the
/// line part of the way towards it, in offset and in slope, so the jitter of single reports
/// is smoothed out while the rate difference between the audio clock and CLOCK_MONOTONIC
/// (0.1 % is common) is followed. The loop starts wide, so it locks within a second, and
/// narrows to `settledBandwidth`. A report far off the line for the reports' jitter (a
/// quantum that changed, a server that stalled or skipped, a stream that restarted) starts it
/// again from that report.
/// A value type with no locks: one thread reports, and publishes what it reads
/// (`StreamClock`).
public struct ClockEstimator: Sendable {
    /// Where the line is: the time of sample `position`, and the length of one sample.
    public struct Line: Equatable, Sendable {
        /// A sample position of the stream.
        public var position: Int64
        /// CLOCK_MONOTONIC nanoseconds of that sample.
        public var timeNs: Double
        /// Nanoseconds per sample (20 833.3 at 48 kHz when the two clocks agree).
        public var nanosecondsPerSample: Double

        /// The time of sample `position` on this line, in CLOCK_MONOTONIC nanoseconds.
        public func timeNs(ofPosition other: Int64) -> Double {
            timeNs + Double(other - position) * nanosecondsPerSample
        }
    }

    /// The loop's bandwidth once settled, in Hz: about how fast a change of rate is followed.
    public static let settledBandwidth = 0.1
    /// Its bandwidth at the first report, halved every `narrowingHalfLife` seconds down to
    /// the settled one (in about 2 s).
    public static let startBandwidth = 2.0
    /// Seconds of audio in which the bandwidth halves while it narrows.
    public static let narrowingHalfLife = 0.5
    /// How far the rate may be from nominal: a sound card off by more is not believed.
    public static let maximumRateError = 0.005

    /// The line so far; nil before the first report.
    public private(set) var line: Line?
    /// Root mean square of the reports' distance from the line (before each moved it), in ns:
    /// how far a single report strays, a measure of the server timestamps' jitter.
    public private(set) var jitterNs: Double = 0
    /// Times the line was started again from a report far off it.
    public private(set) var relocks = 0
    private let nominalNanosecondsPerSample: Double
    private var bandwidth = ClockEstimator.startBandwidth
    private var meanSquare = 0.0
    private var reportsAveraged = 0.0
    // Seconds between reports as they usually come (a moving average), 0 before two.
    private var usualInterval = 0.0

    /// An estimator for a clock nominally running at `rate` samples per second.
    public init(rate: Int = AudioFormat.sampleRate) {
        nominalNanosecondsPerSample = 1e9 / Double(rate)
    }

    /// The server says sample `position` was at `timeNs` (CLOCK_MONOTONIC). Positions only
    /// grow; a report that goes back, or far off the line, starts it again (at the rate found
    /// so far). Allocates nothing.
    public mutating func report(position: Int64, timeNs: UInt64) {
        let time = Double(timeNs)
        guard let current = line else {
            start(at: position, time: time, counted: false)
            return
        }
        guard position > current.position else {
            start(at: position, time: time, counted: true)
            return
        }
        let predicted = current.timeNs(ofPosition: position)
        let error = time - predicted
        let interval = Double(position - current.position) * current.nanosecondsPerSample / 1e9
        let stepNs = stepThresholdNs
        // The jitter is averaged over about a second, quickly over the first reports (so
        // that a noisy server's early reports are not all taken for steps). A step counts
        // only up to the step size: a 100 ms stall must not make the next seconds' jitter
        // so large that a real step is smoothed in instead of taken.
        reportsAveraged += 1
        let counted = min(abs(error), stepNs)
        meanSquare += (counted * counted - meanSquare) * min(1, max(interval, 1 / reportsAveraged))
        jitterNs = meanSquare.squareRoot()
        guard abs(error) < stepNs else {
            start(at: position, time: time, counted: true)
            return
        }
        // A second-order loop, its gains for the time since the last report (reports come
        // at the server's quantum, which need not be fixed), but weighed as one report at
        // most twice the usual interval: after a gap (reports left out, a reading thread that
        // stalled) a single report's jitter would otherwise turn the rate by as much as that
        // of all the reports missing (a 5 ms late arrival after 150 ms turned it by 340 ppm).
        let weighed = usualInterval > 0 ? min(interval, 2 * usualInterval) : interval
        usualInterval = usualInterval > 0 ? usualInterval + (weighed - usualInterval) / 16 : interval
        let omega = min(2 * Double.pi * bandwidth * weighed, 0.5)  // (beyond it the loop rings)
        let offsetGain = 2.0.squareRoot() * omega
        let rateGain = omega * omega
        var next = current
        next.position = position
        next.timeNs = predicted + offsetGain * error
        let nominal = nominalNanosecondsPerSample
        next.nanosecondsPerSample = min(
            max(current.nanosecondsPerSample + rateGain * error / Double(position - current.position),
                nominal * (1 - ClockEstimator.maximumRateError)),
            nominal * (1 + ClockEstimator.maximumRateError))
        line = next
        bandwidth = max(
            ClockEstimator.settledBandwidth, bandwidth * exp2(-interval / ClockEstimator.narrowingHalfLife))
    }

    /// How far off the line a report must be to start it again, in ns: `TimingPolicy.standard.clockStepJitters` times
    /// the reports' jitter, at least `TimingPolicy.standard.clockStepFloorNs` and at most `TimingPolicy.standard.clockRelockNs`.
    public var stepThresholdNs: Double {
        min(TimingPolicy.standard.clockRelockNs, max(TimingPolicy.standard.clockStepFloorNs, TimingPolicy.standard.clockStepJitters * jitterNs))
    }

    /// The rate of the audio clock against CLOCK_MONOTONIC, in parts per million (positive:
    /// the audio clock runs slow, its samples last longer); 0 before the first report.
    public var rateErrorPPM: Double {
        guard let line else { return 0 }
        return (line.nanosecondsPerSample / nominalNanosecondsPerSample - 1) * 1e6
    }

    /// Moves the line by `ns` (later, if positive) at its rate, counted as a relock, and takes
    /// it on to sample `position` (so the next report is weighed for the time since that one,
    /// not since an older line's): the clock stepped against the samples by that much, as
    /// found by someone who knows more than a single report (`SkippedCycleWatch`).
    public mutating func step(byNs ns: Double, at position: Int64) {
        guard let current = line else { return }
        line = Line(position: position, timeNs: current.timeNs(ofPosition: position) + ns,
                    nanosecondsPerSample: current.nanosecondsPerSample)
        relocks += 1
    }

    /// Forgets the line and the rate: another stream, maybe of another clock, reports next.
    public mutating func reset() {
        line = nil
        relocks = 0
        jitterNs = 0
        meanSquare = 0
        reportsAveraged = 0
        usualInterval = 0
    }

    private mutating func start(at position: Int64, time: Double, counted: Bool) {
        if counted { relocks += 1 }
        let rate = line?.nanosecondsPerSample ?? nominalNanosecondsPerSample
        line = Line(position: position, timeNs: time, nanosecondsPerSample: rate)
        bandwidth = ClockEstimator.startBandwidth
    }
}
