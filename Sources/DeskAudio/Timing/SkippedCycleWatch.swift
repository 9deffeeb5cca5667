/// Finds, for times worked back from arrivals (`ArrivalEnvelope`), the moment the audio
/// stopped matching the line: a graph cycle the server skipped. When a stalled machine makes a
/// PipeWire graph skip a cycle, the samples after it sounded one quantum (5.3 ms at 256)
/// later than the samples before them suggest, and nothing in the PulseAudio API says so
/// (the native capture reads it from the graph clock). Every arrival from then on is later
/// by that much, so the least of them moves up; left to the estimator's loop and the
/// envelope's slew, the stamps would run early for about a second, each frame a little off
/// its length. The watch keeps a copy of the estimator at the start of each of the last
/// parts of the stream (`partSamples` each) and the least distance, from that copy's line, of
/// the reports made from two parts later on. When those reports (two parts or more of them)
/// all lie more than `stepThresholdNs` later than the envelope's least distance (the last
/// second's, which still holds the reports from before), the cycle was skipped just before
/// them: the copy, from before the loop started chasing them, moved by what they were late,
/// is the line to go on with. Both the part and the threshold follow the fragments the stream
/// is read in (`readSamples`): a stream read every 64 samples shows a skip of 1.3 ms within
/// about 20 ms, one read every 10 ms needs longer to tell a 5.3 ms skip from a late thread.
/// A skip of several cycles (a machine that stalled for tens of milliseconds) is told sooner
/// (`largeSkip`): every report of 100 ms of audio, coming over 100 ms, later than a cycle
/// and a read's straying allow. A value type with no locks or allocation: the reporting thread
/// owns it (docs/reliability.md, R-PP-SKIP).
struct SkippedCycleWatch: Sendable {
    /// Samples in a part of a stream read in fragments longer than `shortReadSamples`: 125 ms.
    static let longestPartSamples = Int64(AudioFormat.sampleRate / 8)
    /// The longest fragment that counts as short: 128 samples (2.7 ms), what a host gets that
    /// asked for a small quantum. Such reads stray little (0.02–0.04 ms rms on pipewire-pulse
    /// at 64), so a few of them late by half a cycle tell a skip.
    static let shortReadSamples = 128
    /// Reports in a part of a stream read in short fragments, and the fewest samples in one.
    static let reportsPerPart = 4
    static let shortestPartSamples: Int64 = 256

    /// How much audio those reports must cover, and how long they must have taken to come:
    /// 100 ms each. A reading thread that ran late catches up in a burst (reads late by less
    /// and less, handled within a millisecond, then one on time), which is no skip however
    /// long it was stalled; after a skip the reports keep coming at their pace, all late.
    /// And the least lateness of a shorter run is no measure of the skip: pipewire-pulse's
    /// 10 ms fragments of 256-sample cycles come 10.7 and 5.3 ms apart, late by a sawtooth
    /// that repeats every 80 ms (3840 samples), and of 60 ms of them the least was up to
    /// 2.6 ms above the last second's (the PipeWire daemon stopped for 40 ms, 2026-11-29).
    static let largeSkipSamples = Int64(AudioFormat.sampleRate / 10)
    static let largeSkipArrivalNs: UInt64 = 100_000_000

    /// Samples per channel the stream is read in, as its capture asked the server (0: not
    /// known, taken as long). Set before each report; a change forgets the marks, which were
    /// counted in parts of the old length.
    var readSamples = 0 {
        didSet {
            let part = readsShortFragments
                ? max(Int64(readSamples * Self.reportsPerPart), Self.shortestPartSamples) : Self.longestPartSamples
            if part != partSamples {
                partSamples = part
                reset()
            }
        }
    }

    /// True for a stream read in short fragments (`shortReadSamples` or fewer).
    var readsShortFragments: Bool { readSamples > 0 && readSamples <= Self.shortReadSamples }

    /// How much later than the envelope's least distance every report of two parts must be (and
    /// how much earlier a single report, for a step back): half a fragment, within the bounds
    /// above. The server's graph cycle is no longer than a fragment (a fragment of
    /// pipewire-pulse holds one or more cycles), and a skip moves the audio by one cycle:
    /// 5.3 ms at 256 samples, 1.3 ms at 64, when the host asked for that quantum.
    var stepThresholdNs: Double {
        guard readSamples > 0 else { return TimingPolicy.standard.skipStepLargestNs }
        let half = Double(MonotonicClock.nanoseconds(ofSamples: UInt64(readSamples))) / 2
        return min(max(half, TimingPolicy.standard.skipStepSmallestNs), TimingPolicy.standard.skipStepLargestNs)
    }

    /// Samples in a part of the stream: `longestPartSamples`, or for short reads
    /// `reportsPerPart` fragments (at least `shortestPartSamples`).
    private(set) var partSamples = SkippedCycleWatch.longestPartSamples

    /// The estimator as a part started, the least distance from its line of the reports of
    /// that part, and of the reports made from two parts later on (the part between is where
    /// the skip may have been).
    private struct Mark: Sendable {
        var part: Int64
        var estimator: ClockEstimator
        var leastOwnNs: Double
        var leastLaterNs: Double
    }

    // The last five parts' marks, by part number modulo 5.
    private var marks = InlineArray<5, Mark?>(repeating: nil)

    /// The reports in a row later than `TimingPolicy.standard.largeSkipNs`: the estimator as the first came, its
    /// sample and arrival, and the least lateness of them from that copy's line.
    private struct LateRun: Sendable {
        var start: Int64
        var arrivedAtNs: UInt64
        var estimator: ClockEstimator
        var leastLateNs: Double
    }

    private var lateRun: LateRun?

    /// No marks yet.
    init() {}

    /// Before `estimator` takes the report of sample `position` at `timeNs`: marks a part the
    /// report is the first of, and adds the report to the marks two or more parts older.
    mutating func note(position: Int64, timeNs: UInt64, estimator: ClockEstimator) {
        let part = position / partSamples
        for index in marks.indices {
            guard var mark = marks[index] else { continue }
            if part < mark.part || part >= mark.part + 5 {
                marks[index] = nil  // gone back (a new stream), or too old to restore
            } else if let line = mark.estimator.line {
                let distance = Double(timeNs) - line.timeNs(ofPosition: position)
                if part == mark.part { mark.leastOwnNs = min(mark.leastOwnNs, distance) }
                if part >= mark.part + 2 { mark.leastLaterNs = min(mark.leastLaterNs, distance) }
                marks[index] = mark
            }
        }
        let slot = Int(part % 5)
        if marks[slot]?.part != part, let line = estimator.line {
            marks[slot] = Mark(
                part: part, estimator: estimator, leastOwnNs: Double(timeNs) - line.timeNs(ofPosition: position),
                leastLaterNs: .infinity)
        }
    }

    /// After a report of sample `position`: the estimator to go on with, when the reports of
    /// the last two parts or more all lie later than `earliestNs` (the envelope's least
    /// distance; nil: the least of the mark's own part, for a line still settling, whose
    /// envelope was measured from a line that moved since) by more than the threshold, a
    /// mark's copy moved by what they were late; nil otherwise. A mark is judged at the first
    /// report four parts after it (the two parts after the one between, whole, and that report).
    mutating func skippedCycle(at position: Int64, earliestNs: Double?) -> ClockEstimator? {
        let part = position / partSamples
        let slot = Int((part + 1) % 5)  // the mark of part - 4, if there is one
        guard let mark = marks[slot], mark.part == part - 4, mark.leastLaterNs.isFinite else { return nil }
        marks[slot] = nil  // judged once
        let lateNs = mark.leastLaterNs - (earliestNs ?? mark.leastOwnNs)
        guard lateNs > stepThresholdNs else { return nil }
        var estimator = mark.estimator
        estimator.step(byNs: lateNs, at: position)
        return estimator
    }

    /// After a report of sample `position` at `timeNs`, arrived at `arrivedAtNs`, before
    /// `estimator` takes it: the estimator to go on with when this and the reports before
    /// it, over `largeSkipSamples` of audio and `largeSkipArrivalNs` of arrivals or more, all
    /// lay later than `earliestNs` (the envelope's least distance) by more than
    /// `TimingPolicy.standard.largeSkipNs`: the copy from the first of them, moved by the least of what they were
    /// late (as `skippedCycle` moves a mark's). Nil otherwise. Every report, a settling
    /// line's too, is to be shown to it.
    mutating func largeSkip(
        at position: Int64, timeNs: UInt64, arrivedAtNs: UInt64, earliestNs: Double, estimator: ClockEstimator
    ) -> ClockEstimator? {
        guard let line = (lateRun?.estimator ?? estimator).line else { return nil }
        let lateNs = Double(timeNs) - line.timeNs(ofPosition: position) - earliestNs
        guard lateNs > TimingPolicy.standard.largeSkipNs else {
            lateRun = nil
            return nil
        }
        var run = lateRun ?? LateRun(start: position, arrivedAtNs: arrivedAtNs, estimator: estimator, leastLateNs: lateNs)
        run.leastLateNs = min(run.leastLateNs, lateNs)
        guard position - run.start >= Self.largeSkipSamples, arrivedAtNs &- run.arrivedAtNs >= Self.largeSkipArrivalNs
        else {
            lateRun = run
            return nil
        }
        lateRun = nil
        run.estimator.step(byNs: run.leastLateNs, at: position)
        return run.estimator
    }

    /// Forgets every mark and late run (the line started again, or stepped).
    mutating func reset() {
        for index in marks.indices { marks[index] = nil }
        lateRun = nil
    }
}
