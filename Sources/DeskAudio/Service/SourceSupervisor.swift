/// The thread that keeps a capture's streams alive: while the capture runs it calls `check`
/// every 200 ms (`CaptureControl.reopenFailedSources`, which reopens a stream the server
/// dropped or stopped feeding, with back-off). `check` must never wait for a lock a stop
/// may hold while it stops this thread.
final class SourceSupervisor: Sendable {
    private let check: @Sendable () -> Void
    private let thread = StoppableThread()

    /// A stopped supervisor that will call `check`.
    init(check: @escaping @Sendable () -> Void) {
        self.check = check
    }

    /// Starts the thread (a running one is left as it is).
    func start() throws(DeskAudioError) {
        guard !thread.isRunning else { return }
        try thread.start(named: "deskaudio-watch") { [self] in
            while !thread.isStopping {
                thread.wake.wait(milliseconds: 200)
                if !thread.isStopping { check() }
            }
        }
    }

    /// Stops the thread and waits for it: `check` is not running and is not called again
    /// once this returns.
    func stop() { thread.stop() }
}
