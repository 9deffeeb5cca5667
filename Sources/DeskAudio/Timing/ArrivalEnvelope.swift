/// How far below a clock line its earliest recent reports lie, for times worked back from
/// when audio arrived. The PulseAudio API gives no server clock for captured audio, so its
/// times are arrivals, and an arrival is never early, only late: the thread's wake-up, the
/// transport, and on pipewire-pulse the part of a graph cycle the server keeps back until a
/// whole fragment is ready (0 to 5.3 ms at a 256-sample quantum) all delay it, nothing
/// hastens it. `ClockEstimator`'s line through such reports follows the clock's rate well
/// (the delays average out) but sits late by their mean: 2.7 ms on pipewire-pulse
/// (docs/performance.md). The reports that waited least are the earliest against the line:
/// moving the line by the least of the last second's distances from it (`earliestNs`,
/// negative while the line is steady) leaves it late by the least delay instead of the mean.
/// The window is kept in `bucketCount` parts of the stream's positions, each the least
/// distance reported in it, so it moves on a part (125 ms) at a time. The shift follows that
/// least distance at once for `settlingSamples` after the line (re)starts; after that, the
/// time the line and the shift give a sample moves by at most `TimingPolicy.standard.arrivalSlewPerFrameNs` a 10 ms frame
/// (the shift takes up what the line moved beyond that), so that consecutive frames stay
/// their length apart within that when a part holding the least distance is forgotten, or
/// while the line follows reports that all came later (a skipped cycle, until
/// `SkippedCycleWatch` steps it). A value type with no locks or allocation: the reporting
/// thread owns it.
struct ArrivalEnvelope: Sendable {
    /// Samples of the stream whose reports count: one second.
    static let windowSamples = Int64(AudioFormat.sampleRate)
    /// How many parts the window is kept in.
    static let bucketCount = 8
    private static let bucketSamples = windowSamples / Int64(bucketCount)
    /// How long after the line (re)starts the shift follows the envelope at once: 2 s, as
    /// `ClockEstimator` narrows in about that.
    static let settlingSamples = Int64(2 * AudioFormat.sampleRate)

    // The least distance in each part of the window, by part number modulo `bucketCount`;
    // infinity where none was reported.
    private var least = InlineArray<8, Double>(repeating: .infinity)
    private var newestBucket: Int64?

    /// The least distance (ns, report minus line) of the window's reports; 0 before any.
    private(set) var earliestNs = 0.0
    // The shift given last, and where the line started and the last report was.
    private var shiftNs = 0.0
    private var lineStart: Int64 = 0
    private var lastPosition: Int64 = 0

    /// An empty envelope.
    init() {}

    /// A report of sample `position` was `distanceNs` from the line (its time minus the
    /// line's time for it, before the report moved the line). Positions only grow; one that
    /// goes back starts the envelope again.
    mutating func add(distanceNs: Double, position: Int64) {
        let count = Int64(Self.bucketCount)
        let bucket = position / Self.bucketSamples
        if let newest = newestBucket {
            if bucket >= newest {
                // Parts the window moved past are forgotten.
                var passed = newest + 1
                while passed <= min(bucket, newest + count) {
                    least[Int(passed % count)] = .infinity
                    passed += 1
                }
            } else {
                reset()
            }
        }
        newestBucket = bucket
        let slot = Int(bucket % count)
        least[slot] = min(least[slot], distanceNs)
        earliestNs = .infinity
        for index in least.indices { earliestNs = min(earliestNs, least[index]) }
    }

    /// What to add to the line (ns) after a report of sample `position` that was
    /// `distanceNs` from it, or nil when the line started again from the report; the report
    /// moved the line's time for `position` by `lineMovedNs`.
    mutating func shift(afterReportOf position: Int64, distanceNs: Double?, lineMovedNs: Double) -> Double {
        guard let distanceNs, position >= lastPosition else {
            reset()
            lineStart = position
            lastPosition = position
            return 0
        }
        add(distanceNs: distanceNs, position: position)
        if position - lineStart < Self.settlingSamples {
            shiftNs = earliestNs
        } else {
            let limit = TimingPolicy.standard.arrivalSlewPerFrameNs * Double(position - lastPosition) / Double(AudioFormat.frameSamples)
            let wanted = lineMovedNs + earliestNs - shiftNs
            shiftNs += min(max(wanted, -limit), limit) - lineMovedNs
        }
        lastPosition = position
        return shiftNs
    }

    /// A report of sample `position` was left out (it came too late to say anything of the
    /// clock): the frames up to it went out on the line as it stands, so the slew of the
    /// next move counts from there, not from the last report taken (after a reading thread
    /// stalled 150 ms, the first report taken moved the time of a sample 0.3 ms at once).
    mutating func leftOut(position: Int64) {
        lastPosition = max(lastPosition, position)
    }

    /// True once the line has run `settlingSamples` since it (re)started, at sample `position`.
    func isSettled(at position: Int64) -> Bool {
        position - lineStart >= Self.settlingSamples
    }

    /// After the line stepped to where the least report lies `earliestNs` from it
    /// (`SkippedCycleWatch`): forgets the reports, which were measured from the line before,
    /// shifts by that least distance, and goes on as if a report at that distance had come
    /// at `position` (the window fills again from there, the shift moving by the slew).
    mutating func restartWindow(at position: Int64) {
        for index in least.indices { least[index] = .infinity }
        let bucket = position / Self.bucketSamples
        newestBucket = bucket
        least[Int(bucket % Int64(Self.bucketCount))] = earliestNs
        shiftNs = earliestNs
    }

    /// Forgets every report (a new stream, or a line started again).
    mutating func reset() {
        for index in least.indices { least[index] = .infinity }
        newestBucket = nil
        earliestNs = 0
        shiftNs = 0
    }
}
