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

/// A value handed to a lock for good (`sending`), as the standard library's `Mutex` holds
/// one: nothing reaches it but through the lock, and nothing the lock gives back shares it
/// (the compiler's region checks hold the closures to that), so the box is Sendable whatever
/// the value: state one thread at a time may use, such as the capture's control state. A
/// pthread mutex underneath, as `LockedValue` (R-TSAN-MUTEX).
public final class LockOwned<Value>: @unchecked Sendable {
    private let lock = PThreadMutex()
    private let storage: UnsafeMutablePointer<Value>

    /// A lock that owns `initial`.
    public init(_ initial: sending Value) {
        storage = .allocate(capacity: 1)
        storage.initialize(to: initial)
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> sending Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&storage.pointee)
    }

    /// Runs `body` with the value if the lock is free right now; nil (and `body` not run) if
    /// another thread holds it. For a thread that must never wait.
    public func tryWithLock<Result>(_ body: (inout sending Value) -> sending Result) -> sending Result? {
        guard lock.tryLock() else { return nil }
        defer { lock.unlock() }
        return body(&storage.pointee)
    }
}
