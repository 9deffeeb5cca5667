import CPipeWire
import DeskAudioShim
import Glibc

/// What a PipeWire daemon has to capture from, read once: the registry's `Audio/Sink` and
/// `Audio/Source*` nodes, and the defaults from the session manager's "default" metadata
/// (`default.audio.sink`, `default.audio.source`).
struct PipeWireDevices {
    /// Sinks and sources, defaults marked.
    var devices: [CaptureDevice] = []
    /// The node named by `default.audio.sink`, if any.
    var defaultSinkName: String?
    /// The node named by `default.audio.source`, if any; it may be a sink (its monitor).
    var defaultSourceName: String?

    /// Reads them on `connection`, lock held, within `deadline`.
    static func read(on connection: PipeWireConnection, deadline: inout timespec) throws(DeskAudioError)
        -> PipeWireDevices
    {
        let reader = PipeWireDeviceReader(connection: connection)
        defer { reader.finish() }
        try reader.run(deadline: &deadline)
        return reader.result
    }

    /// The name inside a metadata value such as `{"name":"alsa_output.pci"}`.
    static func name(inMetadataValue value: UnsafePointer<CChar>) -> String? {
        var outer = spa_json()
        var object = spa_json()
        spa_json_init(&outer, value, strlen(value))
        guard spa_json_enter_object(&outer, &object) > 0 else { return nil }
        var key = [CChar](repeating: 0, count: 64)
        var text = [CChar](repeating: 0, count: 1024)
        while spa_json_get_string(&object, &key, Int32(key.count)) > 0 {
            if key.withUnsafeBufferPointer({ strcmp($0.baseAddress!, "name") == 0 }) {
                guard spa_json_get_string(&object, &text, Int32(text.count)) > 0 else { return nil }
                return text.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            }
            var skipped: UnsafePointer<CChar>?
            guard spa_json_next(&object, &skipped) > 0 else { return nil }
        }
        return nil
    }
}

/// The registry and metadata listeners behind `PipeWireDevices.read`. Loop thread or lock held.
private final class PipeWireDeviceReader {
    private struct Node {
        var id: UInt32
        var name: String
        var description: String
        var mediaClass: String
    }

    private let connection: PipeWireConnection
    private var registry: PipeWireRegistry?
    private var metadata: PipeWireMetadata?
    private var nodes: [Node] = []
    // Input ports per node id: a sink's channels.
    private var inputPorts: [UInt32: Int] = [:]
    private var defaultSink: String?
    private var defaultSource: String?

    init(connection: PipeWireConnection) {
        self.connection = connection
    }

    /// Lock held: every global arrives by the first round trip, the metadata's properties
    /// (bound while globals arrive) by the second.
    func run(deadline: inout timespec) throws(DeskAudioError) {
        registry = try PipeWireRegistry(on: connection) { [unowned self] id, type, properties in
            global(id: id, type: type, properties: properties)
        }
        try connection.roundTrip(deadline: &deadline, what: "listing devices")
        try connection.roundTrip(deadline: &deadline, what: "reading the default devices")
    }

    /// Lock held: removes the listeners and destroys the proxies.
    func finish() {
        metadata?.close()
        registry?.close()
        metadata = nil
        registry = nil
    }

    var result: PipeWireDevices {
        var devices = PipeWireDevices(defaultSinkName: defaultSink, defaultSourceName: defaultSource)
        for node in nodes where !node.name.hasPrefix(PipeWireHostMute.sinkNamePrefix) {
            if node.mediaClass == "Audio/Sink" {
                devices.devices.append(
                    CaptureDevice(
                        kind: .sink, name: node.name, description: node.description,
                        isDefault: node.name == defaultSink, channels: inputPorts[node.id] ?? 0))
            } else if node.mediaClass.hasPrefix("Audio/Source") {
                devices.devices.append(
                    CaptureDevice(
                        kind: .source, name: node.name, description: node.description,
                        isDefault: node.name == defaultSource))
            }
        }
        return devices
    }

    private func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Node":
            guard let name = properties[PW_KEY_NODE_NAME], let mediaClass = properties[PW_KEY_MEDIA_CLASS] else {
                return
            }
            nodes.append(
                Node(id: id, name: name, description: properties[PW_KEY_NODE_DESCRIPTION] ?? name, mediaClass: mediaClass))
        case "PipeWire:Interface:Port":
            guard properties[PW_KEY_PORT_DIRECTION] == "in", let node = properties[PW_KEY_NODE_ID].flatMap(UInt32.init)
            else { return }
            inputPorts[node, default: 0] += 1
        case "PipeWire:Interface:Metadata":
            guard metadata == nil, properties[PW_KEY_METADATA_NAME] == PipeWireMetadata.defaultName else { return }
            metadata = PipeWireMetadata(id: id, type: type, registry: registry?.proxy) { [unowned self] _, key, value in
                guard let value else { return }
                switch key {
                case "default.audio.sink": defaultSink = value.withCString { PipeWireDevices.name(inMetadataValue: $0) }
                case "default.audio.source": defaultSource = value.withCString { PipeWireDevices.name(inMetadataValue: $0) }
                default: break
                }
            }
        default:
            break
        }
    }
}
