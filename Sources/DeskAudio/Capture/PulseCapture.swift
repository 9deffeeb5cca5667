import CPulse
import Glibc
import Synchronization

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
    /// The server's answer to "which device is the target now?".
    private enum Resolution {
        case device(String)
        case failure(String)
    }
    // Written by callbacks on the main loop thread, read with the main loop lock held.
    private var resolution: Resolution?
    // What this stream records, and from which device now.
    private var target = CaptureTarget.defaultSinkMonitor
    private var device = ""
    private let failed = Atomic<Bool>(false)

    /// True once the server connection or the record stream failed after start.
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

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
        do throws(DeskAudioError) {
            try connectLocked(deadline: deadline)
            self.target = target
            resolveTarget()
            try waitLocked(until: deadline, what: "the default device") { resolution != nil }
            if case .failure(let reason) = resolution { throw DeskAudioError.streamFailed(reason) }
            if case .device(let name) = resolution { device = name }
            try recordLocked(from: device, deadline: deadline)
            try followDefaultsLocked()
            watchForFailureLocked()
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
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
        }
        stream = nil
        if let context {
            pa_context_set_state_callback(context, nil, nil)
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
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().resolveTarget()
            }, Unmanaged.passUnretained(self).toOpaque())
        guard let operation = pa_context_subscribe(context, PA_SUBSCRIPTION_MASK_SERVER, nil, nil) else {
            throw .streamFailed("PulseAudio refused change notifications: \(contextFailure)")
        }
        pa_operation_unref(operation)
    }

    /// From now on, a context or stream that fails or terminates marks the capture failed.
    private func watchForFailureLocked() {
        let me = Unmanaged.passUnretained(self).toOpaque()
        pa_context_set_state_callback(
            context,
            { context, userData in
                let state = pa_context_get_state(context)
                guard state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED else { return }
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().failed.store(
                    true, ordering: .releasing)
            }, me)
        pa_stream_set_state_callback(
            stream,
            { stream, userData in
                let state = pa_stream_get_state(stream)
                guard state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED else { return }
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().failed.store(
                    true, ordering: .releasing)
            }, me)
    }

    /// Asks the server which device the target means now: the default sink's monitor, or
    /// the default source (never a monitor). The answer lands in `resolution`; a running
    /// stream moves there if it is another device. Lock held, or on the main loop thread.
    private func resolveTarget() {
        resolution = nil
        pa_operation_unref(
            pa_context_get_server_info(
                context,
                { context, info, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    switch capture.target {
                    case .defaultSinkMonitor:
                        guard let sink = info?.pointee.default_sink_name else {
                            return capture.resolved(.failure("the server has no default sink"))
                        }
                        pa_operation_unref(
                            pa_context_get_sink_info_by_name(
                                context, sink,
                                { _, sink, endOfList, userData in
                                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!)
                                        .takeUnretainedValue()
                                    if let monitor = sink?.pointee.monitor_source_name {
                                        capture.resolved(.device(String(cString: monitor)))
                                    } else if endOfList < 0 {
                                        capture.resolved(.failure("the default sink has no monitor source"))
                                    }
                                }, userData))
                    case .defaultSource:
                        guard let source = info?.pointee.default_source_name else {
                            return capture.resolved(.failure("the server has no default source"))
                        }
                        pa_operation_unref(
                            pa_context_get_source_info_by_name(
                                context, source,
                                { _, source, endOfList, userData in
                                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!)
                                        .takeUnretainedValue()
                                    if let source, source.pointee.monitor_of_sink != UInt32.max {
                                        capture.resolved(
                                            .failure(
                                                "the default source \(String(cString: source.pointee.name)) "
                                                    + "is a sink monitor, not a microphone"))
                                    } else if let source {
                                        capture.resolved(.device(String(cString: source.pointee.name)))
                                    } else if endOfList < 0 {
                                        capture.resolved(.failure("the default source is gone"))
                                    }
                                }, userData))
                    }
                }, Unmanaged.passUnretained(self).toOpaque()))
    }

    // Main loop thread (or lock held, during start, when there is no stream yet).
    private func resolved(_ answer: Resolution) {
        resolution = answer
        guard case .device(let newDevice) = answer, newDevice != device, let stream else { return }
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
