/// The least of a record stream's recent path latencies (the source's latency plus the
/// transport's, from PulseAudio's timing info), which capture times are worked back from
/// arrivals by. libpulse takes the transport to be half a timing request's round trip, so a
/// server slow to answer one stretches it until the next update: a path taken too long makes
/// a capture time early, the one error `ArrivalEnvelope` cannot take out (it keeps the
/// earliest reports), where one taken too short only makes it late, which it can. So the
/// least path of the last two to four seconds (kept in two parts of `partNs`) is used. A
/// value type with no locks or allocation: the stream's main loop thread owns it.
struct PulsePathFloor: Sendable {
    /// How long one part of the window lasts, in ns.
    static let partNs: UInt64 = 2_000_000_000

    private var current = UInt64.max
    private var previous = UInt64.max
    private var partEndNs: UInt64 = 0

    /// An empty floor.
    init() {}

    /// Takes the path `pathNs` read at `nowNs` (CLOCK_MONOTONIC); returns the least path of
    /// the window, this one included.
    mutating func floor(adding pathNs: UInt64, at nowNs: UInt64) -> UInt64 {
        if nowNs >= partEndNs {
            // A new part; the one before is kept only if it ended just now.
            previous = nowNs - partEndNs < Self.partNs ? current : .max
            current = .max
            partEndNs = nowNs + Self.partNs
        }
        current = min(current, pathNs)
        return min(current, previous)
    }
}
