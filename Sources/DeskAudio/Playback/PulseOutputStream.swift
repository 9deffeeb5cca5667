import CPulse
import Glibc
import Synchronization

/// A `FramePlayer`'s output on a PulseAudio daemon (on pipewire-pulse the player uses
/// PipeWire itself): a playback stream, either to the default sink, or, for a microphone,
/// into a null sink of its own (`deskaudio_remotemic_<pid>_<n>`) whose monitor a
/// module-remap-source makes into a source with the name asked for: PulseAudio has no other
/// way for a client to offer a source. The microphone's stream is corked while nothing
/// records from the source; `onRunning` follows the source's state (running while recorded).
/// Its write callback, on the main loop's thread, asks `render` for what the server wants.
/// A killed process leaves both modules loaded: the next start of a microphone or a capture
/// on that server unloads them (`PulseNullSink.unloadLeftovers`).
final class PulseOutputStream: FrameOutput {
    private static let made = Atomic<Int>(0)
    private let asMicrophone: Bool
    private let name: String
    private let description: String
    private let render: RenderRequest
    private let onRunning: (Bool) -> Void
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    private var modules: [UInt32] = []  // loaded by this stream, in load order
    private var isRunning = false  // main loop thread

    /// A microphone (`asMicrophone`) named `name`, or a playback stream to the default sink.
    init(
        asMicrophone: Bool, name: String, description: String,
        render: @escaping RenderRequest, onRunning: @escaping (Bool) -> Void
    ) {
        self.asMicrophone = asMicrophone
        self.name = name
        self.description = description
        self.render = render
        self.onRunning = onRunning
    }

    deinit { stop() }

    func start(timeoutMs: Int) throws(DeskAudioError) {
        let deadline = LibraryClock.system.deadline(afterMilliseconds: timeoutMs)
        let newConnection = try PulseConnection(deadline: deadline)
        connection = newConnection
        try newConnection.withLock(undoingOnError: stop) { () throws(DeskAudioError) in
            var device: String?
            if asMicrophone {
                try PulseNullSink.unloadLeftovers(on: newConnection, deadline: deadline)
                let feed = "\(PulseNullSink.prefixes[2])\(getpid())_\(PulseOutputStream.made.add(1, ordering: .relaxed).newValue)"
                modules.append(
                    try PulseNullSink.load(feed, description: "DeskAudio-feed-of-\(name)", on: newConnection, deadline: deadline))
                // (Quotes and backslashes would end the module's argument early.)
                let shown = description.filter { !"'\"\\".contains($0) }
                modules.append(
                    try PulseNullSink.loadModule(
                        "module-remap-source",
                        "source_name=\(name) master=\(feed).monitor source_properties=\"device.description='\(shown)'\"",
                        what: "the microphone \(name)", on: newConnection, deadline: deadline))
                device = feed
            }
            try playLocked(to: device, on: newConnection, deadline: deadline)
            if asMicrophone { try watchRecordersLocked(on: newConnection, deadline: deadline) }
        }
    }

    func stop() {
        guard let connection else { return }
        connection.lock()
        pulse.pa_context_set_subscribe_callback(connection.context, nil, nil)
        if let stream {
            pulse.pa_stream_set_write_callback(stream, nil, nil)
            _ = pulse.pa_stream_disconnect(stream)
            pulse.pa_stream_unref(stream)
        }
        stream = nil
        let deadline = LibraryClock.system.deadline(afterMilliseconds: 1000)
        for module in modules.reversed() { PulseNullSink.unload(module, on: connection, deadline: deadline) }
        modules = []
        connection.unlock()
        connection.close()
        self.connection = nil
    }

    /// Lock held: a playback stream to `device` (nil: the default sink), 20 ms ahead of the
    /// server, asked for 10 ms at a time; a microphone's starts corked and stays on its sink.
    private func playLocked(to device: String?, on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) {
        var spec = pa_sample_spec(
            format: PA_SAMPLE_FLOAT32LE, rate: UInt32(AudioFormat.sampleRate), channels: UInt8(AudioFormat.channels))
        var map = pa_channel_map()
        _ = pulse.pa_channel_map_init_stereo(&map)
        guard let newStream = pulse.pa_stream_new(connection.context, description, &spec, &map) else {
            throw .streamFailed("PulseAudio refused the playback stream: \(connection.failureText)")
        }
        stream = newStream
        pulse.pa_stream_set_write_callback(
            newStream,
            { stream, bytes, userData in
                Unmanaged<PulseOutputStream>.fromOpaque(userData!).takeUnretainedValue().fill(stream, bytes: bytes)
            }, Unmanaged.passUnretained(self).toOpaque())
        let frameBytes = UInt32(AudioFormat.frameFloats * MemoryLayout<Float>.size)
        var attributes = pa_buffer_attr(
            maxlength: UInt32.max, tlength: 2 * frameBytes, prebuf: UInt32.max, minreq: frameBytes, fragsize: UInt32.max)
        // Timing updates keep the latency the render's time is told from (`fill`) current.
        let flags =
            PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_INTERPOLATE_TIMING.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
            | (asMicrophone ? PA_STREAM_START_CORKED.rawValue | PA_STREAM_DONT_MOVE.rawValue : 0)
        guard pulse.pa_stream_connect_playback(newStream, device, &attributes, pa_stream_flags_t(flags), nil, nil) >= 0
        else {
            throw .streamFailed("PulseAudio refused to play: \(connection.failureText)")
        }
        var state = PA_STREAM_UNCONNECTED
        try connection.wait(until: deadline, what: "playback stream") {
            state = pulse.pa_stream_get_state(newStream)
            return state == PA_STREAM_READY || state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED
        }
        guard state == PA_STREAM_READY else {
            throw .streamFailed("PulseAudio could not play: \(connection.failureText)")
        }
        if !asMicrophone {
            isRunning = true
            onRunning(true)
        }
    }

    /// Lock held: from now on, each change of a source makes the microphone look at its
    /// state: running (something records) uncorks the stream, anything else corks it.
    private func watchRecordersLocked(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) {
        pulse.pa_context_set_subscribe_callback(
            connection.context,
            { _, _, _, userData in Unmanaged<PulseOutputStream>.fromOpaque(userData!).takeUnretainedValue().checkSource() },
            Unmanaged.passUnretained(self).toOpaque())
        try connection.complete(
            pulse.pa_context_subscribe(connection.context, PA_SUBSCRIPTION_MASK_SOURCE, nil, nil),
            until: deadline, what: "source notifications")
        checkSource()
    }

    // Main loop thread (or lock held).
    private func checkSource() {
        guard let context = connection?.context else { return }
        pulse.pa_operation_unref(
            pulse.pa_context_get_source_info_by_name(
                context, name,
                { _, source, _, userData in
                    guard let source else { return }
                    Unmanaged<PulseOutputStream>.fromOpaque(userData!).takeUnretainedValue().setRunning(
                        source.pointee.state == PA_SOURCE_RUNNING)
                }, Unmanaged.passUnretained(self).toOpaque()))
    }

    // Main loop thread.
    private func setRunning(_ running: Bool) {
        guard running != isRunning, let stream else { return }
        isRunning = running
        pulse.pa_operation_unref(pulse.pa_stream_cork(stream, running ? 0 : 1, nil, nil))
        onRunning(running)
    }

    // Main loop thread: `bytes` of audio the server wants now.
    private func fill(_ stream: OpaquePointer?, bytes: Int) {
        let stride = AudioFormat.channels * MemoryLayout<Float>.size
        var remaining = bytes - bytes % stride
        while remaining > 0 {
            var data: UnsafeMutableRawPointer?
            var length = remaining
            guard pulse.pa_stream_begin_write(stream, &data, &length) == 0, let data, length >= stride else { return }
            length -= length % stride
            // What is written now plays after what the stream and the sink already hold.
            let playsAt = LibraryClock.system.nowNs() &+ UInt64(PulseConnection.latencyNs(of: stream) ?? 0)
            render(
                UnsafeMutableBufferPointer(start: data.assumingMemoryBound(to: Float.self), count: length / MemoryLayout<Float>.size),
                playsAt)
            guard pulse.pa_stream_write(stream, data, length, nil, 0, PA_SEEK_RELATIVE) == 0 else { return }
            remaining -= length
        }
    }
}
