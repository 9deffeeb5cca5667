import Glibc
import Synchronization

/// The host's frame handler, and the guarantee around it: once `setHandler` has
/// returned (on any thread but the delivering one), the old handler is never called
/// again. The lock is taken only by the library's worker and by setters, never by the
/// capture thread.
final class FrameDelivery: @unchecked Sendable {
    /// Receives each AudioFrame's bytes, valid only during the call.
    typealias Handler = @Sendable (UnsafeRawBufferPointer) -> Void

    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    private var handler: Handler?
    private let deliveringThread = Atomic<UInt>(0)  // pthread_t of the thread in a handler call, or 0

    init() {
        lock = .allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
    }

    deinit {
        pthread_mutex_destroy(lock)
        lock.deallocate()
    }

    /// Replaces the handler. Called from inside a handler, it takes effect for the next
    /// frame; called elsewhere, it waits for a handler call in progress to finish.
    func setHandler(_ newHandler: Handler?) {
        if isDeliveringThread {
            handler = newHandler  // the lock is already held by this thread, around our caller
            return
        }
        pthread_mutex_lock(lock)
        handler = newHandler
        pthread_mutex_unlock(lock)
    }

    /// True on the thread that is inside a handler call right now.
    var isDeliveringThread: Bool {
        deliveringThread.load(ordering: .acquiring) == UInt(pthread_self())
    }

    /// Worker thread: calls the handler (if any) with one frame.
    func deliver(_ frame: UnsafeRawBufferPointer) {
        pthread_mutex_lock(lock)
        deliveringThread.store(UInt(pthread_self()), ordering: .releasing)
        handler?(frame)
        deliveringThread.store(0, ordering: .releasing)
        pthread_mutex_unlock(lock)
    }
}
