import CPipeWire
import DeskAudioShim
import Glibc

/// A connection to the PipeWire daemon, served by its own `pw_thread_loop`: what a capture
/// stream and a device query both start from. Callers take the loop lock (`lock()`) around
/// every call into PipeWire, as the thread loop requires.
final class PipeWireConnection: MainLoopLocking {
    /// The thread loop; its lock guards everything below.
    let loop: OpaquePointer
    private var context: OpaquePointer?
    /// The connection to the daemon.
    private(set) var core: OpaquePointer?
    private let coreEvents: UnsafeMutablePointer<pw_core_events>
    private let coreListener: UnsafeMutablePointer<spa_hook>
    // Loop thread, lock held: the newest round trip the daemon has answered, and its error.
    private var doneSequence: Int32 = -1
    private var coreError: String?

    /// The configuration with module-rt: client-rt.conf before PipeWire 1.4, whose client.conf
    /// loads module-rt itself and warns on every connection that asks for client-rt.conf (as
    /// Debian 13's 1.4 does); nil: the default, client.conf.
    static let realTimeConfig: String? = {
        let version = String(cString: pw_get_library_version()).split(separator: ".").compactMap { Int($0) }
        guard version.count >= 2 else { return "client-rt.conf" }
        return (version[0], version[1]) >= (1, 4) ? nil : "client-rt.conf"
    }()

    /// Connects to the daemon. `realTime` loads module-rt (`realTimeConfig`), which gives the
    /// data thread real-time scheduling (as pw-cat does): capture streams need it, or a busy
    /// machine delays the process callback past the 10 ms quantum and audio is lost.
    init(name: String, realTime: Bool) throws(DeskAudioError) {
        PipeWireConnection.initializeLibrary()
        guard let newLoop = pw_thread_loop_new(name, nil) else {
            throw .outOfResources("cannot create a PipeWire thread loop: \(PipeWireConnection.errnoText())")
        }
        loop = newLoop
        coreEvents = .allocate(capacity: 1)
        coreEvents.initialize(to: pw_core_events())
        coreListener = .allocate(capacity: 1)
        coreListener.initialize(to: spa_hook())
        coreEvents.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        coreEvents.pointee.done = { data, id, sequence in
            let connection = Unmanaged<PipeWireConnection>.fromOpaque(data!).takeUnretainedValue()
            guard id == UInt32(PW_ID_CORE) else { return }
            connection.doneSequence = sequence
            pw_thread_loop_signal(connection.loop, false)
        }
        coreEvents.pointee.error = { data, id, _, result, message in
            let connection = Unmanaged<PipeWireConnection>.fromOpaque(data!).takeUnretainedValue()
            guard id == UInt32(PW_ID_CORE) else { return }
            connection.coreError =
                message.map { String(cString: $0) } ?? String(cString: strerror(-result))
            pw_thread_loop_signal(connection.loop, false)
        }
        let config = realTime ? PipeWireConnection.realTimeConfig : nil
        let properties = config.flatMap { pw_properties_new_string("config.name=\($0)") }
        guard let newContext = pw_context_new(pw_thread_loop_get_loop(newLoop), properties, 0) else {
            close()
            throw .outOfResources("cannot create a PipeWire context: \(PipeWireConnection.errnoText())")
        }
        context = newContext
        guard pw_thread_loop_start(newLoop) >= 0 else {
            close()
            throw .outOfResources("cannot start the PipeWire thread loop")
        }
        lock()
        // A chosen user's session: their socket by absolute path (the environment unread).
        let remote = SessionTarget.user.map { pw_properties_new_string("remote.name=\"\($0.pipeWireSocket)\"") } ?? nil
        guard let newCore = pw_context_connect(newContext, remote, 0) else {
            let reason = PipeWireConnection.errnoText()
            unlock()
            close()
            throw .noServer("no PipeWire daemon answered: \(reason)")
        }
        core = newCore
        deskaudio_shim_core_add_listener(
            newCore, coreListener, coreEvents, Unmanaged.passUnretained(self).toOpaque())
        unlock()
    }

    deinit {
        close()
        coreEvents.deallocate()
        coreListener.deallocate()
    }

    /// Takes the loop lock.
    func lock() { pw_thread_loop_lock(loop) }
    /// Releases the loop lock.
    func unlock() { pw_thread_loop_unlock(loop) }

    /// A deadline `milliseconds` from now, for `wait(until:)`.
    func deadline(afterMilliseconds milliseconds: Int) -> timespec {
        var deadline = timespec()
        pw_thread_loop_get_time(loop, &deadline, Int64(milliseconds) * 1_000_000)
        return deadline
    }

    /// Lock held: sleeps until a loop callback signals or the deadline passes (false then).
    func wait(until deadline: inout timespec) -> Bool {
        pw_thread_loop_timed_wait_full(loop, &deadline) == 0
    }

    /// Lock held: wakes a thread waiting in `wait(until:)`.
    func signal() { pw_thread_loop_signal(loop, false) }

    /// Lock held: waits until the daemon has taken `stream` (paused or streaming; a stream's
    /// state callback must signal the loop); throws when it fails, or at the deadline,
    /// naming `what` ("the capture stream").
    func waitUntilAccepted(_ stream: OpaquePointer, _ what: String, deadline: inout timespec, timeoutMs: Int)
        throws(DeskAudioError)
    {
        while true {
            var error: UnsafePointer<CChar>?
            let state = pw_stream_get_state(stream, &error)
            if state == PW_STREAM_STATE_PAUSED || state == PW_STREAM_STATE_STREAMING { return }
            if state == PW_STREAM_STATE_ERROR {
                throw .streamFailed("PipeWire stream failed: \(error.map { String(cString: $0) } ?? "unknown error")")
            }
            guard wait(until: &deadline) else { throw .timeout("PipeWire did not accept \(what) within \(timeoutMs) ms") }
        }
    }

    /// Lock held: waits until the daemon has processed everything sent so far (and sent
    /// the events it caused).
    func roundTrip(deadline: inout timespec, what: String) throws(DeskAudioError) {
        let sequence = deskaudio_shim_core_sync(core, UInt32(PW_ID_CORE), 0)
        while doneSequence != sequence {
            if let coreError { throw .streamFailed("PipeWire: \(coreError)") }
            guard wait(until: &deadline) else { throw .timeout("PipeWire did not answer in time (\(what))") }
        }
    }

    /// Disconnects and frees everything; safe to call more than once. Objects made on the
    /// connection (streams, proxies) must be destroyed first, lock held.
    func close() {
        guard !closed else { return }
        closed = true
        if let core {
            lock()
            spa_hook_remove(coreListener)
            pw_core_disconnect(core)
            self.core = nil
            unlock()
        }
        pw_thread_loop_stop(loop)
        if let context { pw_context_destroy(context) }
        context = nil
        pw_thread_loop_destroy(loop)
    }
    private var closed = false

    private static let initializeOnce: Void = { pw_init(nil, nil) }()
    private static func initializeLibrary() { _ = initializeOnce }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
