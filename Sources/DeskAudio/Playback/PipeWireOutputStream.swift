import CPipeWire
import DeskAudioShim
import Glibc

/// A `FramePlayer`'s output on PipeWire: an output stream that is either a microphone, a node
/// of class `Audio/Source` of its own (no session manager links it anywhere; applications
/// record from it by name, or as the default source if the user makes it one), or a playback
/// stream the session manager links to the default sink. Its process callback, on
/// PipeWire's real-time data thread, asks `render` for exactly what the graph wants: no
/// allocation, no lock. The node runs while something records from it (the microphone) or
/// while the sink plays: `onRunning` is told (on the loop thread) when it starts and stops.
/// It goes with the connection: on `stop`, or when the process ends however it ends.
final class PipeWireOutputStream: FrameOutput {
    private let asMicrophone: Bool
    private let name: String
    private let description: String
    private let render: RenderRequest
    private let onRunning: (Bool) -> Void
    private var connection: PipeWireConnection?
    private var stream: OpaquePointer?
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let listener: UnsafeMutablePointer<spa_hook>

    /// A microphone (`asMicrophone`) or a playback stream, with node name `name`.
    init(
        asMicrophone: Bool, name: String, description: String,
        render: @escaping RenderRequest, onRunning: @escaping (Bool) -> Void
    ) {
        self.asMicrophone = asMicrophone
        self.name = name
        self.description = description
        self.render = render
        self.onRunning = onRunning
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, old, new, _ in
            let source = Unmanaged<PipeWireOutputStream>.fromOpaque(data!).takeUnretainedValue()
            if new == PW_STREAM_STATE_STREAMING { source.onRunning(true) }
            if old == PW_STREAM_STATE_STREAMING { source.onRunning(false) }
            source.connection?.signal()
        }
        events.pointee.process = { data in
            Unmanaged<PipeWireOutputStream>.fromOpaque(data!).takeUnretainedValue().fill()
        }
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
    }

    deinit {
        stop()
        events.deallocate()
        listener.deallocate()
    }

    /// Connects and puts the stream on the server; returns once the server has it.
    func start(timeoutMs: Int) throws(DeskAudioError) {
        let what = asMicrophone ? "the remote microphone" : "the playback stream"
        let newConnection = try PipeWireConnection(name: asMicrophone ? "deskaudio-remote-mic" : "deskaudio-player", realTime: true)
        connection = newConnection
        try newConnection.withLock(undoingOnError: stop) { () throws(DeskAudioError) in
            var deadline = newConnection.deadline(afterMilliseconds: timeoutMs)
            let properties = pw_properties_new_string(
                (asMicrophone
                    ? "media.class=Audio/Source media.role=Communication node.want-driver=true "
                    : "media.category=Playback media.role=Communication ")
                    + "media.type=Audio node.latency=480/48000 application.name=DeskAudio")
            pw_properties_set(properties, PW_KEY_NODE_NAME, name)
            pw_properties_set(properties, PW_KEY_NODE_DESCRIPTION, description)
            guard let newStream = pw_stream_new(newConnection.core, description, properties) else {
                throw .outOfResources("cannot create a PipeWire stream: \(PipeWireConnection.errnoText())")
            }
            stream = newStream
            pw_stream_add_listener(newStream, listener, events, Unmanaged.passUnretained(self).toOpaque())
            let flags = PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue
                | (asMicrophone ? 0 : PW_STREAM_FLAG_AUTOCONNECT.rawValue)
            let result = PipeWireStereoInput.connect(newStream, flags: flags, direction: SPA_DIRECTION_OUTPUT)
            guard result >= 0 else {
                throw .streamFailed("PipeWire refused \(what): \(String(cString: strerror(-result)))")
            }
            try newConnection.waitUntilAccepted(newStream, what, deadline: &deadline, timeoutMs: timeoutMs)
        }
    }

    /// Takes the source off the server; safe to call twice.
    func stop() {
        guard let connection else { return }
        connection.lock()
        if let stream {
            pw_stream_set_active(stream, false)
            pw_stream_destroy(stream)
        }
        stream = nil
        connection.unlock()
        connection.close()
        self.connection = nil
    }

    // Data thread: when what this cycle queues leaves the device: the graph's time of the
    // cycle plus the delay behind it (the device's, and what the stream already holds).
    private func playsAtNs(_ stream: OpaquePointer) -> UInt64 {
        var time = pw_time()
        guard pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) == 0, time.rate.denom > 0, time.now > 0
        else { return LibraryClock.system.nowNs() }
        let ticks = max(time.delay + Int64(time.buffered), 0)
        return UInt64(time.now) &+ UInt64(ticks) * 1_000_000_000 * UInt64(time.rate.num) / UInt64(time.rate.denom)
    }

    // Data thread: one buffer of what the graph asks for.
    private func fill() {
        guard let stream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0,
            let data = spaBuffer.pointee.datas, let base = data.pointee.data, let chunk = data.pointee.chunk
        else { return }
        let stride = AudioFormat.channels * MemoryLayout<Float>.size
        let room = Int(data.pointee.maxsize) / stride
        let requested = Int(buffer.pointee.requested)
        let frames = requested > 0 ? min(requested, room) : min(room, AudioFormat.frameSamples)
        render(
            UnsafeMutableBufferPointer(start: base.assumingMemoryBound(to: Float.self), count: frames * AudioFormat.channels),
            playsAtNs(stream))
        chunk.pointee.offset = 0
        chunk.pointee.stride = Int32(stride)
        chunk.pointee.size = UInt32(frames * stride)
    }
}
