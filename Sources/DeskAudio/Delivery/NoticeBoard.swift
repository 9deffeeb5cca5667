import Glibc
import Synchronization

/// Events and log messages on their way to the host's handlers. Any thread posts (a short
/// lock around a bounded queue; never on a per-frame path); one thread of the library's
/// own delivers, so a handler may call back into the library, and never runs on an audio
/// server's thread or inside a library lock. Once a setter returns (on any thread but the
/// delivering one), the old handler is not called again.
public final class NoticeBoard: Sendable {
    /// Receives an event and a one-line detail, valid only during the call.
    public typealias EventHandler = @Sendable (LibraryEvent, String) -> Void
    /// Receives a log message, valid only during the call.
    public typealias LogHandler = @Sendable (LogLevel, String) -> Void

    private enum Notice: Sendable {
        case event(LibraryEvent, String)
        case log(LogLevel, String)
    }

    /// Notices waiting beyond this many are dropped, so a stuck handler cannot grow
    /// memory without bound.
    public static let capacity = 256

    private let queue = LockedValue<[Notice]>([])
    private let logLevel = Atomic<Int32>(0)  // 0: no log handler
    private let handlers = HandlerSlot<(event: EventHandler?, log: LogHandler?)>((nil, nil))
    private let wake = WakeSignal()
    private let started = Atomic<Bool>(false)
    private let closed = Atomic<Bool>(false)
    private let thread = LockedValue<pthread_t?>(nil)
    // True: no thread; the caller delivers (`deliverQueued`).
    private let stepped: Bool

    /// A board with no handlers; its thread starts with the first notice.
    public convenience init() { self.init(driving: .threads) }

    /// A board whose notices its thread delivers, or (stepped) its caller.
    init(driving: CaptureDriving) {
        stepped = driving == .stepped
    }

    /// Stepped: hands every queued notice to the handlers on the calling thread, in order.
    func deliverQueued() {
        precondition(stepped, "the board's thread delivers")
        deliverPending()
    }

    /// Sets the event handler (nil: none).
    public func setEventHandler(_ handler: EventHandler?) {
        handlers.update { $0.event = handler }
    }

    /// Sets the log handler (nil: none) and the most detailed level it gets.
    public func setLogHandler(_ handler: LogHandler?, level: LogLevel) {
        handlers.update {
            $0.log = handler
            logLevel.store(handler == nil ? 0 : level.rawValue, ordering: .relaxed)
        }
    }

    /// Queues an event for the event handler.
    public func post(_ event: LibraryEvent, _ detail: String) {
        enqueue(.event(event, detail))
    }

    /// Queues a log message, if a log handler wants its level; `message` is only built then.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String) {
        guard level.rawValue <= logLevel.load(ordering: .relaxed) else { return }
        enqueue(.log(level, message()))
    }

    private var isDeliveringThread: Bool { handlers.isCallingThread }

    /// Stops the board's thread; notices still queued, and any posted later, are dropped, and
    /// no handler is called once this returns (called from inside a handler: once it
    /// returns). For a board that goes with its capture.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        guard let running = thread.withLock({ $0 }) else { return }
        if isDeliveringThread {
            pthread_detach(running)
        } else {
            pthread_join(running, nil)
        }
    }

    private func enqueue(_ notice: Notice) {
        guard !closed.load(ordering: .acquiring) else { return }
        let accepted = queue.withLock { queue in
            guard queue.count < NoticeBoard.capacity else { return false }
            queue.append(notice)
            return true
        }
        guard accepted, !stepped else { return }
        if !started.exchange(true, ordering: .acquiringAndReleasing) {
            // Stored under the queue's lock order: close() reads it after setting `closed`.
            thread.withLock { stored in
                stored = try? startLibraryThread(named: "deskaudio-notice") { [self] in deliverUntilClosed() }
            }
            if thread.withLock({ $0 }) == nil { started.store(false, ordering: .releasing) }
        }
        wake.signal()
    }

    // The board's thread: runs until close().
    private func deliverUntilClosed() {
        while !closed.load(ordering: .acquiring) {
            wake.wait(milliseconds: 1000)
            deliverPending()
        }
    }

    // Hands the queued notices to the handlers, oldest first.
    private func deliverPending() {
        while !closed.load(ordering: .acquiring), let notice = queue.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) {
            handlers.call { handlers in
                switch notice {
                case .event(let event, let detail): handlers.event?(event, detail)
                case .log(let level, let message):
                    if level.rawValue <= logLevel.load(ordering: .relaxed) { handlers.log?(level, message) }
                }
            }
        }
    }
}
