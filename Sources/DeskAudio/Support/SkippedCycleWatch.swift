/// Finds, for times worked back from arrivals (`ArrivalEnvelope`), the moment the audio
/// stopped matching the line: a graph cycle the server skipped. When a stalled machine makes a
/// PipeWire graph skip a cycle, the samples after it sounded one quantum (5.3 ms at 256)
/// later than the samples before them suggest, and nothing in the PulseAudio API says so
/// (the native capture reads it from the graph clock). Every arrival from then on is later
/// by that much, so the least of them moves up; left to the estimator's loop and the
/// envelope's slew, the stamps would run early for about a second, each frame a little off
/// its length. The watch keeps a copy of the estimator at the start of each of the last
/// parts of the stream (125 ms each) and the least distance, from that copy's line, of the
/// reports made from two parts later on. When those reports (250 ms or more of them) all lie
/// more than `stepThresholdNs` later than the envelope's least distance (the last second's,
/// which still holds the reports from before), the cycle was skipped just
/// before them: the copy, from before the loop started chasing them, moved by what they were
/// late, is the line to go on with. A value type with no locks or allocation: the reporting
/// thread owns it.
struct SkippedCycleWatch: Sendable {
    /// Samples in a part of the stream: 125 ms.
    static let partSamples = Int64(AudioFormat.sampleRate / 8)
    /// How much later than the envelope's least distance every report of 250 ms must be:
    /// half a 256-sample quantum, above what a settled stream's least report strays.
    static let stepThresholdNs = 2_500_000.0

    /// The estimator as a part started, and the least distance from its line of the reports
    /// made from two parts later on (the part between is where the skip may have been).
    private struct Mark: Sendable {
        var part: Int64
        var estimator: ClockEstimator
        var leastLaterNs: Double
    }

    // The last five parts' marks, by part number modulo 5.
    private var marks = InlineArray<5, Mark?>(repeating: nil)

    /// No marks yet.
    init() {}

    /// Before `estimator` takes the report of sample `position` at `timeNs`: marks a part the
    /// report is the first of, and adds the report to the marks two or more parts older.
    mutating func note(position: Int64, timeNs: UInt64, estimator: ClockEstimator) {
        let part = position / Self.partSamples
        for index in marks.indices {
            guard var mark = marks[index] else { continue }
            if part < mark.part || part >= mark.part + 5 {
                marks[index] = nil  // gone back (a new stream), or too old to restore
            } else if part >= mark.part + 2, let line = mark.estimator.line {
                mark.leastLaterNs = min(mark.leastLaterNs, Double(timeNs) - line.timeNs(ofPosition: position))
                marks[index] = mark
            }
        }
        let slot = Int(part % 5)
        if marks[slot]?.part != part, estimator.line != nil {
            marks[slot] = Mark(part: part, estimator: estimator, leastLaterNs: .infinity)
        }
    }

    /// After a report of sample `position`: the estimator to go on with, when the reports of
    /// the last 250 ms or more all lie later than `earliestNs` (the envelope's least distance) by more
    /// than the threshold, a mark's copy moved by what they were late; nil otherwise. A mark
    /// is judged at the first report four parts after it (the two parts after the one
    /// between, whole, and that report).
    mutating func skippedCycle(at position: Int64, earliestNs: Double) -> ClockEstimator? {
        let part = position / Self.partSamples
        let slot = Int((part + 1) % 5)  // the mark of part - 4, if there is one
        guard let mark = marks[slot], mark.part == part - 4, mark.leastLaterNs.isFinite else { return nil }
        marks[slot] = nil  // judged once
        let lateNs = mark.leastLaterNs - earliestNs
        guard lateNs > Self.stepThresholdNs else { return nil }
        var estimator = mark.estimator
        estimator.step(byNs: lateNs, at: position)
        return estimator
    }

    /// Forgets every mark (the line started again, or stepped).
    mutating func reset() {
        for index in marks.indices { marks[index] = nil }
    }
}
