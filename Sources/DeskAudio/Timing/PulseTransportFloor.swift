import Glibc

/// The transport latency in a pipewire-pulse record stream's timing info, without the stalls
/// in it. On one machine libpulse takes `transport_usec` as how long after the server sent its
/// timing reply the client handled it: 20–100 µs on a local socket, but the whole stall when
/// the client's thread was not run as the reply came (55 ms once in a ten-minute run,
/// docs/capture.md), and the value stays until the next update, a second or more later. Added
/// to each read's path, it made the reads of that second look 55 ms early, and the arrival
/// clock stepped back, then forward again. Like an arrival, that measure can be late, never
/// early: the least of the last `updateCount` updates is the transport (docs/reliability.md,
/// R-PP-TRANSPORT). Main loop thread only;
/// a value type with no locks or allocation.
struct PulseTransportFloor {
    /// How many timing updates the least is taken over (libpulse updates about once a second).
    static let updateCount = 8

    private var recent = InlineArray<8, UInt64>(repeating: .max)
    private var updates = 0
    private var lastStamp: timeval?

    /// No updates yet.
    init() {}

    /// The transport (µs) to take for an update stamped `stamp` that reported `reportedUsec` (an update seen
    /// again, with the same stamp, counts once).
    mutating func transportUsec(stamp: timeval, reportedUsec: UInt64) -> UInt64 {
        if lastStamp.map({ $0.tv_sec != stamp.tv_sec || $0.tv_usec != stamp.tv_usec }) ?? true {
            lastStamp = stamp
            recent[updates % Self.updateCount] = reportedUsec
            updates += 1
        }
        var least = UInt64.max
        for index in recent.indices { least = min(least, recent[index]) }
        return least
    }
}
