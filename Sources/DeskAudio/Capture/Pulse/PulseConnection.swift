import CPulse
import Glibc

/// A connection to a PulseAudio server (or pipewire-pulse) through libpulse's asynchronous
/// API, served by its own `pa_threaded_mainloop`: what a capture stream and a device query
/// both start from. Callers take the main loop lock (`lock()`) around every libpulse call.
final class PulseConnection: MainLoopLocking {
    /// The main loop; its lock guards the context and everything made on it.
    let mainloop: OpaquePointer
    /// The connected context.
    let context: OpaquePointer
    private var closed = false

    /// Connects, waiting at most until `deadline` (CLOCK_MONOTONIC ns), as a client with
    /// `properties` besides its name (keys the server reads, such as pipewire-pulse's
    /// `pulse.min.quantum`). Never spawns a server.
    init(deadline: UInt64, properties: [String: String] = [:]) throws(DeskAudioError) {
        try PulseLibrary.load()
        guard let loop = pulse.pa_threaded_mainloop_new() else {
            throw .outOfResources("cannot create a PulseAudio main loop")
        }
        guard let newContext = PulseConnection.newContext(on: loop, named: "DeskAudio", properties: properties) else {
            pulse.pa_threaded_mainloop_free(loop)
            throw .outOfResources("cannot create a PulseAudio context")
        }
        mainloop = loop
        context = newContext
        guard pulse.pa_threaded_mainloop_start(loop) >= 0 else {
            close()
            throw .outOfResources("cannot start the PulseAudio main loop")
        }
        lock()
        do throws(DeskAudioError) {
            guard PulseConnection.connect(newContext) else {
                throw .noServer("no PulseAudio server answered: \(failureText)")
            }
            var state = PA_CONTEXT_UNCONNECTED
            try wait(until: deadline, what: "connecting") {
                state = pulse.pa_context_get_state(newContext)
                return state == PA_CONTEXT_READY || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED
            }
            guard state == PA_CONTEXT_READY else {
                throw .noServer("no PulseAudio server answered: \(failureText)")
            }
            unlock()
        } catch {
            unlock()
            close()
            throw error
        }
    }

    deinit { close() }

    /// A client context on `loop`'s API named `name`, with `properties`; nil when libpulse refused.
    private static func newContext(
        on loop: OpaquePointer, named name: String, properties: [String: String]
    ) -> OpaquePointer? {
        guard let list = pulse.pa_proplist_new() else { return nil }
        defer { pulse.pa_proplist_free(list) }
        for (key, value) in properties where pulse.pa_proplist_sets(list, key, value) < 0 { return nil }
        return pulse.pa_context_new_with_proplist(pulse.pa_threaded_mainloop_get_api(loop), name, list)
    }

    /// Starts connecting `context` to the server (the chosen user's session: their socket,
    /// and their cookie, which PulseAudio lets a client of another user in with and
    /// pipewire-pulse does not need); false when libpulse refused at once. Never spawns a server.
    private static func connect(_ context: OpaquePointer) -> Bool {
        let user = SessionTarget.user
        if let user { _ = pulse.pa_context_load_cookie_from_file(context, user.pulseCookie) }
        return pulse.pa_context_connect(context, user?.pulseServer, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0
    }

    /// Lock held: a second client connection to the same server, named `name`, served by
    /// this connection's main loop (its callbacks run on the same thread, under the same
    /// lock), still connecting: its state callback says when it is ready. The caller
    /// disconnects and unrefs it, lock held, before this connection closes. nil when libpulse
    /// refused at once.
    func newClientContext(named name: String) -> OpaquePointer? {
        guard let context = PulseConnection.newContext(on: mainloop, named: name, properties: [:]) else { return nil }
        guard PulseConnection.connect(context) else {
            pulse.pa_context_unref(context)
            return nil
        }
        return context
    }

    /// Lock held: the server's name, "pulseaudio" or "PulseAudio (on PipeWire 1.4.2)".
    func serverName(until deadline: UInt64) throws(DeskAudioError) -> String {
        final class Answer { var name = "" }
        let answer = Answer()
        try complete(
            pulse.pa_context_get_server_info(
                context,
                { _, info, userData in
                    guard let name = info?.pointee.server_name else { return }
                    Unmanaged<Answer>.fromOpaque(userData!).takeUnretainedValue().name = String(cString: name)
                }, Unmanaged.passUnretained(answer).toOpaque()),
            until: deadline, what: "the server info")
        return answer.name
    }

    /// Takes the main loop lock.
    /// The main loop's address, for a check on another thread (`isOnLoop(at:)`).
    var loopAddress: UInt { UInt(bitPattern: mainloop) }

    /// True on the thread of the main loop at `address` (libpulse's own check).
    static func isOnLoop(at address: UInt) -> Bool {
        pulse.pa_threaded_mainloop_in_thread(OpaquePointer(bitPattern: address)) != 0
    }

    func lock() { pulse.pa_threaded_mainloop_lock(mainloop) }
    /// Releases the main loop lock.
    func unlock() { pulse.pa_threaded_mainloop_unlock(mainloop) }

    /// Lock held: a new record stream named `name` for 48 kHz F32LE in `layout`'s channels
    /// and positions (the server converts and remixes from whatever its device has); nil
    /// when the server refused.
    func newRecordStream(named name: String, layout: ChannelLayout = .stereo) -> OpaquePointer? {
        PulseConnection.newRecordStream(on: context, named: name, layout: layout)
    }

    /// Lock held: the same on `context` (this connection's or one of `newClientContext`'s).
    static func newRecordStream(on context: OpaquePointer, named name: String, layout: ChannelLayout) -> OpaquePointer? {
        var spec = pa_sample_spec(
            format: PA_SAMPLE_FLOAT32LE, rate: UInt32(AudioFormat.sampleRate), channels: UInt8(layout.channels))
        var map = PulseConnection.channelMap(layout)
        return pulse.pa_stream_new(context, name, &spec, &map)
    }

    /// PulseAudio's channel map of `layout`, in its order.
    static func channelMap(_ layout: ChannelLayout) -> pa_channel_map {
        let all = [
            PA_CHANNEL_POSITION_FRONT_LEFT, PA_CHANNEL_POSITION_FRONT_RIGHT, PA_CHANNEL_POSITION_FRONT_CENTER,
            PA_CHANNEL_POSITION_LFE, PA_CHANNEL_POSITION_REAR_LEFT, PA_CHANNEL_POSITION_REAR_RIGHT,
            PA_CHANNEL_POSITION_SIDE_LEFT, PA_CHANNEL_POSITION_SIDE_RIGHT,
        ]
        let positions = layout == .mono ? [PA_CHANNEL_POSITION_MONO] : Array(all.prefix(layout.channels))
        var map = pa_channel_map()
        map.channels = UInt8(positions.count)
        withUnsafeMutableBytes(of: &map.map) { slots in
            for (index, position) in positions.enumerated() {
                slots.storeBytes(of: position.rawValue, toByteOffset: index * MemoryLayout<pa_channel_position_t>.stride, as: Int32.self)
            }
        }
        return map
    }

    /// Buffer attributes for a record stream handed audio in fragments of `samples` samples
    /// per channel (left at its default, PulseAudio hands audio over in blocks of seconds).
    static func fragments(ofSamples samples: Int, channels: Int = AudioFormat.channels) -> pa_buffer_attr {
        pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: UInt32(samples * channels * MemoryLayout<Float>.size))
    }

    /// Main loop thread: hands `body` each fragment `stream` has ready, in order, as samples,
    /// or as nil and its float count for a hole the server reports; drops each after.
    static func readFragments(of stream: OpaquePointer?, _ body: (UnsafeBufferPointer<Float>?, Int) -> Void) {
        var data: UnsafeRawPointer?
        var length = 0
        while pulse.pa_stream_readable_size(stream) > 0, pulse.pa_stream_peek(stream, &data, &length) == 0, length > 0 {
            let floats = length / MemoryLayout<Float>.size
            body(data.map { UnsafeBufferPointer(start: $0.assumingMemoryBound(to: Float.self), count: floats) }, floats)
            _ = pulse.pa_stream_drop(stream)
        }
    }

    /// Main loop thread: the source's latency plus what waits in `stream`, in ns (a negative
    /// one, read ahead of the interpolated clock just after a read, counts as none); nil
    /// before the server gave timing.
    static func latencyNs(of stream: OpaquePointer?) -> Int64? {
        var latency: pa_usec_t = 0
        var negative: Int32 = 0
        guard pulse.pa_stream_get_latency(stream, &latency, &negative) == 0 else { return nil }
        return negative != 0 ? 0 : Int64(latency) * 1000
    }

    /// The context's last error, for messages.
    var failureText: String { pulse.pa_strerror(pulse.pa_context_errno(context)).map { String(cString: $0) } ?? "unknown error" }

    /// Lock held: waits until `done` is true or the deadline passes (the lock is released
    /// while sleeping, so callbacks can run).
    func wait(until deadline: UInt64, what: String, _ done: () -> Bool) throws(DeskAudioError) {
        while !done() {
            guard LibraryClock.system.nowNs() < deadline else {
                throw .timeout("PulseAudio did not answer in time (\(what))")
            }
            unlock()
            usleep(5_000)
            lock()
        }
    }

    /// Lock held: waits until `operation` (which this call releases) has completed.
    func complete(_ operation: OpaquePointer?, until deadline: UInt64, what: String) throws(DeskAudioError) {
        guard let operation else { throw .streamFailed("PulseAudio refused \(what): \(failureText)") }
        defer { pulse.pa_operation_unref(operation) }
        try wait(until: deadline, what: what) { pulse.pa_operation_get_state(operation) != PA_OPERATION_RUNNING }
    }

    /// Disconnects and frees everything; safe to call more than once. Streams made on the
    /// context must be disconnected first, lock held.
    func close() {
        guard !closed else { return }
        closed = true
        lock()
        pulse.pa_context_set_state_callback(context, nil, nil)
        pulse.pa_context_set_subscribe_callback(context, nil, nil)
        pulse.pa_context_disconnect(context)
        pulse.pa_context_unref(context)
        unlock()
        pulse.pa_threaded_mainloop_stop(mainloop)
        pulse.pa_threaded_mainloop_free(mainloop)
    }
}
