import CPipeWire
import DeskAudioShim

/// Measures one application's playback for `AppLevels`: an input stream that no session
/// manager links (node.autoconnect=false), to which `PipeWireAppRouter` links the
/// application's ports beside the capture's. Its process callback, on PipeWire's data thread,
/// only measures into a `LevelMeter`: no allocation, no lock. Loop lock held for every call.
final class PipeWireLevelStream {
    private let meter: LevelMeter
    private var stream: OpaquePointer?
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let listener: UnsafeMutablePointer<spa_hook>

    /// Creates and connects a stream measuring into `meter` on `connection`; nil if PipeWire
    /// refused it. `name` names the application measured, for pw-top and pw-dump.
    init?(measuring name: String, into meter: LevelMeter, on connection: PipeWireConnection) {
        self.meter = meter
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.process = { data in
            Unmanaged<PipeWireLevelStream>.fromOpaque(data!).takeUnretainedValue().measure()
        }
        listener = .allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        let properties = pw_properties_new_string(
            "media.type=Audio media.category=Capture node.latency=480/48000 node.name=deskaudio-level "
                + "node.autoconnect=false node.passive=true application.name=DeskAudio")
        pw_properties_set(properties, PW_KEY_NODE_DESCRIPTION, "DeskAudio level of \(name)")
        guard let newStream = pw_stream_new(connection.core, "DeskAudio level", properties) else { return nil }
        stream = newStream
        pw_stream_add_listener(newStream, listener, events, Unmanaged.passUnretained(self).toOpaque())
        let flags = PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue
        guard PipeWireStereoInput.connect(newStream, flags: flags) >= 0 else {
            destroy()
            return nil
        }
    }

    deinit {
        destroy()
        events.deallocate()
        listener.deallocate()
    }

    /// The stream's node id (the router links to its ports), or UInt32.max before the daemon
    /// gave it one.
    var nodeID: UInt32 { stream.map { pw_stream_get_node_id($0) } ?? UInt32.max }

    /// Disconnects and frees the stream; its links go with it. Safe to call twice.
    func destroy() {
        if let stream { pw_stream_destroy(stream) }
        stream = nil
    }

    // Data thread.
    private func measure() {
        guard let stream else { return }
        PipeWireStereoInput.read(stream) { meter.measure($0) }
    }
}
