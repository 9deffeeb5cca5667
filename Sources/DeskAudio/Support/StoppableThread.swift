import Glibc
import Synchronization

/// One of the library's threads that runs until it is asked to stop: the thread, its stop
/// flag and the signal that cuts its waits short, owned together. `start` and `stop` are
/// called by one owner at a time; the body polls `isStopping` and waits on `wake`.
final class StoppableThread: Sendable {
    /// What the body waits on; `stop` signals it.
    let wake: WakeSignal
    private let stopRequested = Atomic<Bool>(false)
    private let thread = LockedValue<pthread_t?>(nil)

    /// A thread not yet started, whose waits `wake` cuts short.
    init(wake: WakeSignal = WakeSignal()) {
        self.wake = wake
    }

    /// True once `stop` was called: the body returns as soon as it sees it.
    var isStopping: Bool { stopRequested.load(ordering: .acquiring) }

    /// True between `start` and `stop`.
    var isRunning: Bool { thread.withLock { $0 != nil } }

    /// Starts the thread, named `name` (seen in top -H), running `body`.
    func start(named name: String, _ body: @escaping @Sendable () -> Void) throws(DeskAudioError) {
        try thread.withLock { thread throws(DeskAudioError) in
            precondition(thread == nil, "\(name) started twice")
            stopRequested.store(false, ordering: .releasing)
            thread = try startLibraryThread(named: name, body)
        }
    }

    /// Asks the body to return, wakes it and waits for it; nothing of it runs once this
    /// returns. Does nothing if not started. Must not be called on the thread itself.
    func stop() {
        guard let running = thread.withLock({ thread in defer { thread = nil }; return thread }) else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        pthread_join(running, nil)
    }
}
