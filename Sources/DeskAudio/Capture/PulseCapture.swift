import CPulse
import Glibc

/// Captures through libpulse's asynchronous API on its own `pa_threaded_mainloop`:
/// F32LE 48 kHz stereo requested (the server converts from whatever its device runs at),
/// with fragsize set to 10 ms so the server hands audio over every 10 ms instead of its
/// default of seconds. The read callback only copies into the ring and wakes the worker.
final class PulseCapture: CaptureStream, @unchecked Sendable {
    private let ring: SampleRing
    private let wake: WakeSignal
    private var mainloop: OpaquePointer?
    private var context: OpaquePointer?
    private var stream: OpaquePointer?
    // Answers of the server, written by callbacks with the mainloop lock held.
    private var answer: String?
    private var answerIsMonitor = false
    private var answered = false
    private var defaultSink: String?
    private var defaultSource: String?
    // What this stream records, and from which device now (main loop thread once running).
    private var target = CaptureTarget.defaultSinkMonitor
    private var device = ""

    init(ring: SampleRing, wake: WakeSignal) {
        self.ring = ring
        self.wake = wake
    }

    deinit { stop() }

    /// Connects, resolves the device for `target` through the server, and starts recording.
    func start(_ target: CaptureTarget, timeoutMs: Int = 3000) throws(DeskAudioError) {
        precondition(mainloop == nil, "start called twice")
        guard let loop = pa_threaded_mainloop_new() else {
            throw .outOfResources("cannot create a PulseAudio main loop")
        }
        mainloop = loop
        guard let newContext = pa_context_new(pa_threaded_mainloop_get_api(loop), "DeskAudio") else {
            stop()
            throw .outOfResources("cannot create a PulseAudio context")
        }
        context = newContext
        guard pa_threaded_mainloop_start(loop) >= 0 else {
            stop()
            throw .outOfResources("cannot start the PulseAudio main loop")
        }
        let deadline = MonotonicClock.nowNs() + UInt64(timeoutMs) * 1_000_000
        pa_threaded_mainloop_lock(loop)
        do {
            try connectLocked(deadline: deadline)
            self.target = target
            device = try resolveLocked(target, deadline: deadline)
            try recordLocked(from: device, deadline: deadline)
            try followDefaultsLocked()
            pa_threaded_mainloop_unlock(loop)
        } catch {
            pa_threaded_mainloop_unlock(loop)
            stop()
            throw error
        }
    }

    func stop() {
        guard let loop = mainloop else { return }
        pa_threaded_mainloop_lock(loop)
        if let stream {
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        stream = nil
        if let context {
            pa_context_set_subscribe_callback(context, nil, nil)
            pa_context_disconnect(context)
            pa_context_unref(context)
        }
        context = nil
        pa_threaded_mainloop_unlock(loop)
        pa_threaded_mainloop_stop(loop)
        pa_threaded_mainloop_free(loop)
        mainloop = nil
    }

    /// Waits, lock held, until `done` is true or the deadline passes (the lock is released
    /// while sleeping so callbacks can run).
    private func waitLocked(until deadline: UInt64, what: String, _ done: () -> Bool) throws(DeskAudioError) {
        while !done() {
            guard MonotonicClock.nowNs() < deadline else {
                throw .timeout("PulseAudio did not answer in time (\(what))")
            }
            pa_threaded_mainloop_unlock(mainloop)
            usleep(5_000)
            pa_threaded_mainloop_lock(mainloop)
        }
    }

    private var contextFailure: String {
        String(cString: pa_strerror(pa_context_errno(context)))
    }

    private func connectLocked(deadline: UInt64) throws(DeskAudioError) {
        guard pa_context_connect(context, nil, PA_CONTEXT_NOAUTOSPAWN, nil) >= 0 else {
            throw .noServer("no PulseAudio server answered: \(contextFailure)")
        }
        var state = PA_CONTEXT_UNCONNECTED
        try waitLocked(until: deadline, what: "connecting") {
            state = pa_context_get_state(context)
            return state == PA_CONTEXT_READY || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED
        }
        guard state == PA_CONTEXT_READY else {
            throw .noServer("no PulseAudio server answered: \(contextFailure)")
        }
    }

    /// Asks the server for the default sink's monitor, or the default source.
    private func resolveLocked(_ target: CaptureTarget, deadline: UInt64) throws(DeskAudioError) -> String {
        let me = Unmanaged.passUnretained(self).toOpaque()
        answered = false
        pa_operation_unref(
            pa_context_get_server_info(
                context,
                { _, info, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    capture.defaultSink = info?.pointee.default_sink_name.map { String(cString: $0) }
                    capture.defaultSource = info?.pointee.default_source_name.map { String(cString: $0) }
                    capture.answered = true
                }, me))
        try waitLocked(until: deadline, what: "server info") { answered }
        guard let name = target == .defaultSource ? defaultSource : defaultSink else {
            throw .streamFailed(
                target == .defaultSource
                    ? "the server has no default source" : "the server has no default sink")
        }
        answered = false
        answer = nil
        switch target {
        case .defaultSinkMonitor:
            pa_operation_unref(
                pa_context_get_sink_info_by_name(
                    context, name,
                    { _, info, _, userData in
                        let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                        if let info {
                            capture.answer = info.pointee.monitor_source_name.map { String(cString: $0) }
                        }
                        capture.answered = true
                    }, me))
            try waitLocked(until: deadline, what: "default sink") { answered }
            guard let monitor = answer else {
                throw .streamFailed("the default sink \(name) has no monitor source")
            }
            return monitor
        case .defaultSource:
            pa_operation_unref(
                pa_context_get_source_info_by_name(
                    context, name,
                    { _, info, _, userData in
                        let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                        if let info {
                            capture.answer = String(cString: info.pointee.name)
                            capture.answerIsMonitor = info.pointee.monitor_of_sink != UInt32.max
                        }
                        capture.answered = true
                    }, me))
            try waitLocked(until: deadline, what: "default source") { answered }
            guard let source = answer else { throw .streamFailed("the default source \(name) is gone") }
            guard !answerIsMonitor else {
                throw .streamFailed("the default source \(source) is a sink monitor, not a microphone")
            }
            return source
        }
    }

    private func recordLocked(from device: String, deadline: UInt64) throws(DeskAudioError) {
        var spec = pa_sample_spec(
            format: PA_SAMPLE_FLOAT32LE, rate: UInt32(AudioFormat.sampleRate),
            channels: UInt8(AudioFormat.channels))
        var map = pa_channel_map()
        pa_channel_map_init_stereo(&map)
        guard let newStream = pa_stream_new(context, "DeskAudio capture", &spec, &map) else {
            throw .streamFailed("PulseAudio refused the stream: \(contextFailure)")
        }
        stream = newStream
        pa_stream_set_read_callback(
            newStream,
            { stream, _, userData in
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().readAvailable(stream)
            }, Unmanaged.passUnretained(self).toOpaque())
        let tenMilliseconds = UInt32(AudioFormat.frameFloats * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max, tlength: UInt32.max, prebuf: UInt32.max, minreq: UInt32.max,
            fragsize: tenMilliseconds)
        guard pa_stream_connect_record(newStream, device, &attributes, PA_STREAM_ADJUST_LATENCY) >= 0 else {
            throw .streamFailed("PulseAudio refused to record from \(device): \(contextFailure)")
        }
        var state = PA_STREAM_UNCONNECTED
        try waitLocked(until: deadline, what: "record stream") {
            state = pa_stream_get_state(newStream)
            return state == PA_STREAM_READY || state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED
        }
        guard state == PA_STREAM_READY else {
            throw .streamFailed("PulseAudio could not record from \(device): \(contextFailure)")
        }
    }

    /// Subscribes to server changes: when the default sink (or source) changes, the stream
    /// is moved to the new default's monitor (or the new default source).
    private func followDefaultsLocked() throws(DeskAudioError) {
        pa_context_set_subscribe_callback(
            context,
            { _, event, _, userData in
                let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
                guard facility == PA_SUBSCRIPTION_EVENT_SERVER.rawValue else { return }
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().serverChanged()
            }, Unmanaged.passUnretained(self).toOpaque())
        guard let operation = pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SERVER, nil, nil) else {
            throw .streamFailed("PulseAudio refused change notifications: \(contextFailure)")
        }
        pa_operation_unref(operation)
    }

    // Main loop thread: the server's defaults may have changed; find the device we should
    // record from now, and move there if it is not the current one.
    private func serverChanged() {
        pa_operation_unref(
            pa_context_get_server_info(
                context,
                { context, info, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    guard let info else { return }
                    switch capture.target {
                    case .defaultSinkMonitor:
                        guard let sink = info.pointee.default_sink_name else { return }
                        pa_operation_unref(
                            pa_context_get_sink_info_by_name(
                                context, sink,
                                { _, sink, _, userData in
                                    guard let monitor = sink?.pointee.monitor_source_name else { return }
                                    Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                                        .move(to: String(cString: monitor))
                                }, userData))
                    case .defaultSource:
                        guard let source = info.pointee.default_source_name else { return }
                        pa_operation_unref(
                            pa_context_get_source_info_by_name(
                                context, source,
                                { _, source, _, userData in
                                    guard let source, source.pointee.monitor_of_sink == UInt32.max else {
                                        return
                                    }
                                    Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                                        .move(to: String(cString: source.pointee.name))
                                }, userData))
                    }
                }, Unmanaged.passUnretained(self).toOpaque()))
    }

    // Main loop thread.
    private func move(to newDevice: String) {
        guard newDevice != device, let stream else { return }
        device = newDevice
        pa_operation_unref(
            pa_context_move_source_output_by_name(context, pa_stream_get_index(stream), newDevice, nil, nil))
    }

    // Main loop thread: copy everything readable into the ring, wake the worker.
    private func readAvailable(_ stream: OpaquePointer?) {
        var data: UnsafeRawPointer?
        var length = 0
        while pa_stream_readable_size(stream) > 0, pa_stream_peek(stream, &data, &length) == 0, length > 0 {
            if let data {
                ring.write(
                    UnsafeBufferPointer(
                        start: data.assumingMemoryBound(to: Float.self),
                        count: length / MemoryLayout<Float>.size))
            }
            pa_stream_drop(stream)
        }
        wake.signal()
    }
}
