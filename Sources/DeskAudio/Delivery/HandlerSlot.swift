import Glibc
import Synchronization

/// Host callbacks and the lock around their calls, for every handler the library calls
/// (frames, events, logs). Once `update` returns on any thread but the one inside a call,
/// the old handlers are never called again; `update` from inside a call (a handler that
/// changes handlers) applies from the next call. The lock is taken only by the calling
/// thread and by `update`, never by an audio server's thread. (Not a LockedValue: a call
/// holds the lock while a handler may update the value on the same thread.)
final class HandlerSlot<Handlers> {
    private let lock = PThreadMutex()
    private var handlers: Handlers
    private let callingThread = Atomic<UInt>(0)  // pthread_t of the thread inside a call, or 0

    /// A slot holding `initial`.
    init(_ initial: Handlers) {
        handlers = initial
    }

    /// True on the thread that is inside a call right now.
    var isCallingThread: Bool {
        callingThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Changes the handlers: waits for a call in progress on another thread to finish.
    func update(_ change: (inout Handlers) -> Void) {
        if isCallingThread { return change(&handlers) }  // this thread holds the lock, around our caller
        lock.lock()
        defer { lock.unlock() }
        change(&handlers)
    }

    /// Calls `body` with the handlers, holding the lock, marked as the calling thread.
    func call<Result>(_ body: (Handlers) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        callingThread.store(UInt(pthread_self()), ordering: .releasing)
        defer { callingThread.store(0, ordering: .releasing) }
        let current = handlers
        return body(current)
    }
}

// The lock orders every access to the handlers; handlers that may cross threads make the slot one.
extension HandlerSlot: @unchecked Sendable where Handlers: Sendable {}
