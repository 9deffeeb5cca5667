/// When to try reopening a failed stream next: 250 ms after the failure, then doubling up
/// to 2 s between attempts, so a server that is gone for long costs little.
struct RetryBackoff {
    private static let firstDelayNs: UInt64 = 250_000_000
    private static let longestDelayNs: UInt64 = 2_000_000_000
    private var delayNs = RetryBackoff.firstDelayNs
    private var nextAttemptNs: UInt64 = 0

    /// True after a failed attempt, until one succeeds.
    var isRetrying: Bool { nextAttemptNs != 0 }

    /// True when an attempt may be made at `nowNs`.
    func isDue(at nowNs: UInt64) -> Bool { nowNs >= nextAttemptNs }

    /// An attempt failed at `nowNs`: wait longer before the next one.
    mutating func failed(at nowNs: UInt64) {
        nextAttemptNs = nowNs + delayNs
        delayNs = min(delayNs * 2, RetryBackoff.longestDelayNs)
    }

    /// An attempt succeeded: the next failure starts from the shortest delay again.
    mutating func reset() {
        delayNs = RetryBackoff.firstDelayNs
        nextAttemptNs = 0
    }
}
