import Glibc

/// A value behind a pthread mutex. (Used instead of the standard library's Mutex, whose
/// futex calls ThreadSanitizer cannot see: it reports every access through it as a race.)
public final class LockedValue<Value>: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock around `initial`.
    public init(_ initial: Value) {
        value = initial
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free right now; nil (and `body` not run) if
    /// another thread holds it. For a real-time thread, which must never wait.
    public func tryWithLock<Result>(_ body: (inout Value) -> Result) -> Result? {
        guard pthread_mutex_trylock(lock) == 0 else { return nil }
        defer { pthread_mutex_unlock(lock) }
        return body(&value)
    }
}
