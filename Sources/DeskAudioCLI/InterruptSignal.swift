import Glibc
import Synchronization

/// Ctrl-C (SIGINT) and SIGTERM, turned into a flag the main loop polls, so that the tool
/// stops capture and finishes its output instead of dying mid-write.
enum InterruptSignal {
    private static let raised = Atomic<Bool>(false)

    /// Routes SIGINT and SIGTERM to the flag, and unblocks them on the calling thread (a
    /// parent may have started the tool with them blocked).
    static func install() {
        let handler: @convention(c) (Int32) -> Void = { _ in
            InterruptSignal.raised.store(true, ordering: .relaxed)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
    }

    /// True once either signal arrived.
    static var wasRaised: Bool { raised.load(ordering: .relaxed) }
}
