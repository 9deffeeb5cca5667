import Glibc

/// A pthread mutex, allocated once: the one place the library makes one (LockedValue,
/// HandlerSlot and FrameQueue each own theirs through it). Used instead of the standard
/// library's Mutex, whose futex calls ThreadSanitizer cannot see.
final class PThreadMutex: @unchecked Sendable {
    /// The mutex itself, for pthread_cond_wait.
    let raw: UnsafeMutablePointer<pthread_mutex_t>

    /// An unlocked mutex.
    init() {
        raw = .allocate(capacity: 1)
        pthread_mutex_init(raw, nil)
    }

    deinit {
        pthread_mutex_destroy(raw)
        raw.deallocate()
    }

    /// Waits for the mutex and takes it.
    func lock() { pthread_mutex_lock(raw) }

    /// Takes the mutex if it is free right now; false if another thread holds it.
    func tryLock() -> Bool { pthread_mutex_trylock(raw) == 0 }

    /// Lets the mutex go.
    func unlock() { pthread_mutex_unlock(raw) }
}
