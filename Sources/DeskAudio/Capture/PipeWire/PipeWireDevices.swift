import CPipeWire
import DeskAudioShim
import Glibc

/// What a PipeWire daemon has to capture from, read once: the registry's `Audio/Sink` and
/// `Audio/Source*` nodes, and the defaults the session manager names (`PipeWireDefaults`).
struct PipeWireDevices {
    /// Sinks and sources, defaults marked.
    var devices: [CaptureDevice] = []
    /// The default sink's node name, if any.
    var defaultSinkName: String?
    /// The default source's node name, if any; it may be a sink (its monitor).
    var defaultSourceName: String?
    /// False when the session manager did not answer in time or named no default: the
    /// defaults are then the ones it last named to this process, kept where those nodes are
    /// still there (`chosenDefaults`).
    var defaultsAreCurrent = true

    /// How long the defaults may take: a session manager that answers does so within a few
    /// milliseconds; one that does not must leave time for the caller's own work.
    static let defaultsTimeoutMs = 1000

    /// Reads them on `connection`, lock held, within `deadline` (the defaults on a connection
    /// of their own, within `defaultsTimeoutMs` of it).
    static func read(on connection: PipeWireConnection, deadline: inout timespec) throws(DeskAudioError)
        -> PipeWireDevices
    {
        let reader = PipeWireDeviceReader(connection: connection)
        defer { reader.finish() }
        try reader.run(deadline: &deadline)
        let answered = try PipeWireDefaults.read(timeoutMs: defaultsTimeoutMs)
        let (defaults, current) = chosenDefaults(
            answered: answered, lastNamed: PipeWireDefaults.lastAnswered, nodeNames: Set(reader.nodeNames))
        var result = reader.devices(defaults: defaults)
        result.defaultsAreCurrent = current
        return result
    }

    /// The defaults to go by: each one the session manager names now (`answered`), or where
    /// it names none (nil: it did not answer; or none named: it is not running) the one it
    /// last named (`lastNamed`) while that node is still there (`nodeNames`). `current` is
    /// false where it did not answer or a default it last named stands in (R-WP-RESTART).
    static func chosenDefaults(answered: PipeWireDefaults?, lastNamed: PipeWireDefaults, nodeNames: Set<String>)
        -> (defaults: PipeWireDefaults, current: Bool)
    {
        var current = answered != nil
        func chosen(_ now: String?, _ last: String?) -> String? {
            if let now { return now }
            guard let last, nodeNames.contains(last) else { return nil }
            current = false
            return last
        }
        let defaults = PipeWireDefaults(
            sinkName: chosen(answered?.sinkName, lastNamed.sinkName),
            sourceName: chosen(answered?.sourceName, lastNamed.sourceName))
        return (defaults, current)
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

/// The registry listener behind `PipeWireDevices.read`. Loop thread or lock held.
private final class PipeWireDeviceReader {
    private struct Node {
        var id: UInt32
        var name: String
        var description: String
        var mediaClass: String
    }

    private let connection: PipeWireConnection
    private var registry: PipeWireRegistry?
    private var nodes: [Node] = []
    // Input ports per node id: a sink's channels.
    private var inputPorts: [UInt32: Int] = [:]

    init(connection: PipeWireConnection) {
        self.connection = connection
    }

    /// Lock held: every global arrives by the first round trip.
    func run(deadline: inout timespec) throws(DeskAudioError) {
        registry = try PipeWireRegistry(on: connection) { [unowned self] id, type, properties in
            global(id: id, type: type, properties: properties)
        }
        try connection.roundTrip(deadline: &deadline, what: "listing devices")
    }

    /// Lock held: removes the listener and destroys the proxy.
    func finish() {
        registry?.close()
        registry = nil
    }

    /// Every node's name.
    var nodeNames: [String] { nodes.map(\.name) }

    /// The sinks and sources, with `defaults` marked.
    func devices(defaults: PipeWireDefaults) -> PipeWireDevices {
        let defaultSink = defaults.sinkName
        let defaultSource = defaults.sourceName
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
        default:
            break
        }
    }
}
