import Glibc
import Synchronization

/// Wakes the library's worker thread from the capture thread. `signal` never blocks
/// (a POSIX semaphore post), so it is safe on a real-time audio thread.
public final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>
    private let awaitedFloats = Atomic<Int>(0)

    /// A signal with nothing pending.
    public init() {
        semaphore = .allocate(capacity: 1)
        sem_init(semaphore, 0, 0)
    }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Wakes one wait. Never blocks.
    public func signal() { sem_post(semaphore) }

    /// Capture thread: wakes the waiting thread only if a ring now holding
    /// `availableFloats` has what it waits for (see `awaitFloats`), so a server handing
    /// over buffers shorter than a frame does not wake it for nothing. Never blocks.
    public func signal(ringHolding availableFloats: Int) {
        if availableFloats >= awaitedFloats.load(ordering: .acquiring) { sem_post(semaphore) }
    }

    /// Waiting thread: `signal(ringHolding:)` wakes it from now on only once a ring holds
    /// at least `floats` (0: on every call).
    public func awaitFloats(_ floats: Int) {
        awaitedFloats.store(floats, ordering: .releasing)
    }

    /// Waits for a signal, at most `milliseconds`; returns false on time-out.
    @discardableResult
    public func wait(milliseconds: Int) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += milliseconds / 1000
        deadline.tv_nsec += (milliseconds % 1000) * 1_000_000
        if deadline.tv_nsec >= 1_000_000_000 {
            deadline.tv_sec += 1
            deadline.tv_nsec -= 1_000_000_000
        }
        while sem_timedwait(semaphore, &deadline) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}
