import Glibc
import Synchronization

/// The one thread that may use some state for a while (a capture stream's callbacks: its
/// server's real-time thread, or libpulse's main loop), learnt from the first that asks and
/// given up by `release` (the stream ended): what a `LoopBound` checks where the server
/// offers no call that names its thread.
final class ThreadClaim: Sendable {
    private let owner = Atomic<UInt>(0)  // pthread_self() of the claiming thread; 0: none

    /// Nobody's yet.
    init() {}

    /// True on the thread that claimed it; a thread asking while nobody has claimed it
    /// claims it.
    func isOwner() -> Bool {
        let me = UInt(pthread_self())
        let (claimed, holder) = owner.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        return claimed || holder == me
    }

    /// Nobody's again: the next thread to ask claims it.
    func release() { owner.store(0, ordering: .releasing) }
}
