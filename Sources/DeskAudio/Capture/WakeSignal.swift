import Glibc

/// Wakes the library's worker thread from the capture thread. `signal` never blocks
/// (a POSIX semaphore post), so it is safe on a real-time audio thread.
public final class WakeSignal: @unchecked Sendable {
    private let semaphore: UnsafeMutablePointer<sem_t>

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
