/// Notices a stream that is connected but no longer fed: its feed's write count has not
/// moved for a while. A server hands a linked capture stream audio every few milliseconds,
/// silence included; none for seconds means its links are gone (the session manager
/// restarted, or someone unlinked it). Patience: 2 s for a stream that had audio; 1 s for
/// the stream reopened after a stall (a new stream has audio within milliseconds once
/// linked); then 2, 4, 8, up to 16 s, so a stream that stays unfed is reopened less and less
/// often. Audio arriving starts over (docs/reliability.md, R-WP-RESTART).
struct StallWatch {
    /// Stalls since audio last arrived: 1 after the first, when the stream is reopened.
    private(set) var stallsInARow = 0
    private var lastCount: UInt64 = 0
    private var lastChangeNs: UInt64 = 0

    /// How long the stream may go without audio now.
    var patienceNs: UInt64 {
        switch stallsInARow {
        case 0: 2 * MonotonicClock.nanosecondsPerSecond
        case 1: MonotonicClock.nanosecondsPerSecond
        default: MonotonicClock.nanosecondsPerSecond << UInt64(min(stallsInARow - 1, 4))
        }
    }

    /// Starts watching a stream opened at `nowNs` on a feed whose write count is `count`.
    mutating func restart(count: UInt64, at nowNs: UInt64) {
        lastCount = count
        lastChangeNs = nowNs
    }

    /// The feed's write count is `count` at `nowNs`: true when the stream has stalled (the
    /// caller reopens it, then calls `restart`).
    mutating func isStalled(count: UInt64, at nowNs: UInt64) -> Bool {
        if count != lastCount {
            lastCount = count
            lastChangeNs = nowNs
            stallsInARow = 0
            return false
        }
        guard nowNs &- lastChangeNs >= patienceNs else { return false }
        stallsInARow += 1
        return true
    }
}
