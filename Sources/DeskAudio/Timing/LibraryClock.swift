import Synchronization

/// The library's one clock seam: every "now" it reads comes through a `LibraryClock`.
/// `.system` reads CLOCK_MONOTONIC (`MonotonicClock`, read nowhere else); a scenario test
/// gives the service one over a `VirtualClock` it advances. A value with no allocation.
struct LibraryClock: Sendable {
    /// CLOCK_MONOTONIC: what every real server's timing and every AudioFrame's capture time is on.
    static let system = LibraryClock(virtual: nil)

    private let virtual: VirtualClock?

    /// A clock that reads `virtual`, or CLOCK_MONOTONIC when nil.
    init(virtual: VirtualClock?) {
        self.virtual = virtual
    }

    /// Nanoseconds on the clock's timeline.
    @inline(__always)
    func nowNs() -> UInt64 {
        if let virtual { return virtual.nowNs }
        return MonotonicClock.nowNs()
    }

    /// The time `milliseconds` from now, for a wait with a deadline.
    func deadline(afterMilliseconds milliseconds: Int) -> UInt64 {
        nowNs() + UInt64(milliseconds) * MonotonicClock.nanosecondsPerMillisecond
    }
}

/// A clock that moves only when told: the timeline of a scripted server (tests). Any thread.
final class VirtualClock: Sendable {
    private let now: Atomic<UInt64>

    /// A clock standing at `startNs`.
    init(startNs: UInt64) {
        now = Atomic(startNs)
    }

    /// Where it stands.
    var nowNs: UInt64 { now.load(ordering: .acquiring) }

    /// Moves it on by `nanoseconds`.
    func advance(byNs nanoseconds: UInt64) { now.add(nanoseconds, ordering: .acquiringAndReleasing) }

    /// Sets it to `timeNs` (never back: a monotonic clock).
    func set(_ timeNs: UInt64) {
        precondition(timeNs >= nowNs, "a monotonic clock never goes back")
        now.store(timeNs, ordering: .releasing)
    }
}
