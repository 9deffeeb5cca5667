import Glibc

/// A value behind a pthread mutex, reachable only through it: Sendable where its value is,
/// as swift-nio's NIOLockedValueBox. (Used instead of the standard library's Mutex, whose
/// futex calls ThreadSanitizer cannot see: it reports every access through it as a race;
/// docs/reliability.md, R-TSAN-MUTEX.)
public final class LockedValue<Value> {
    private let lock = PThreadMutex()
    private var value: Value

    /// A lock around `initial`.
    public init(_ initial: Value) {
        value = initial
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Runs `body` with the value if the lock is free right now; nil (and `body` not run) if
    /// another thread holds it. For a real-time thread, which must never wait.
    public func tryWithLock<Result>(_ body: (inout Value) -> Result) -> Result? {
        guard lock.tryLock() else { return nil }
        defer { lock.unlock() }
        return body(&value)
    }
}

// The mutex orders every access to the value; a value that may cross threads makes the box one.
extension LockedValue: @unchecked Sendable where Value: Sendable {}
