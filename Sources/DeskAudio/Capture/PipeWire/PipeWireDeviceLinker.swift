import CPipeWire
import DeskAudioShim

/// Links a device into a capture stream itself, for when the session manager does not: a
/// WirePlumber 0.4 restarted under a running graph links nothing to the devices its
/// predecessor had set up (seen on Debian 12: pw-record and parec stay silent too). A
/// sink's monitor ports, or a source's output ports, go to the capture's input ports
/// (channels matched as the router matches them). The device is the one named when the
/// linker was made; it is not followed when the default changes. Links whose ports are
/// replaced (WirePlumber 0.4.13 coming back reconfigures an idle sink) are made again on the
/// new ports (R-WP-PORTS). When the capture's own input ports are replaced under its links
/// (WirePlumber 0.5 coming back reconfigures the stream), the stream is fed no more:
/// `onCapturePortsReplaced` is told (R-WP-STREAM-PORTS). The links belong to this connection
/// and vanish with it. Loop thread, or loop lock held.
final class PipeWireDeviceLinker: PipeWireRegistryWatcher {
    let connection: PipeWireConnection
    private let deviceName: String
    private let recordsMonitor: Bool
    private let captureNode: () -> UInt32
    private let onCapturePortsReplaced: () -> Void
    var registry: PipeWireRegistry?
    private var deviceNode: UInt32?
    private var ports: [UInt32: PipeWirePort] = [:]
    private var links = PipeWirePortLinks<OpaquePointer>()

    /// Links the node named `deviceName` (its monitor ports if `recordsMonitor`, else its
    /// output ports) into the node `captureNode` returns.
    init(
        connection: PipeWireConnection, deviceName: String, recordsMonitor: Bool, captureNode: @escaping () -> UInt32,
        onCapturePortsReplaced: @escaping () -> Void
    ) {
        self.connection = connection
        self.deviceName = deviceName
        self.recordsMonitor = recordsMonitor
        self.captureNode = captureNode
        self.onCapturePortsReplaced = onCapturePortsReplaced
    }

    /// Lock held: removes the links and stops watching; safe to call twice.
    func finish() {
        for proxy in links.removeAll() { pw_proxy_destroy(proxy) }
        stopWatching()
    }

    func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Node" where properties[PW_KEY_NODE_NAME] == deviceName:
            deviceNode = id
        case "PipeWire:Interface:Port":
            guard let port = PipeWirePort(properties) else { return }
            ports[id] = port
        default:
            return
        }
        linkMissing()
    }

    func removed(_ id: UInt32) {
        if id == deviceNode { deviceNode = nil }
        if let port = ports[id], !port.isOutput, port.node == captureNode() { onCapturePortsReplaced() }
        ports[id] = nil
        for proxy in links.remove(touching: id) { pw_proxy_destroy(proxy) }
    }

    /// Makes the links still missing from the device's ports to the capture's.
    private func linkMissing() {
        let capture = captureNode()
        guard let device = deviceNode, capture != UInt32.max else { return }
        let outputs = ports.filter { $0.value.node == device && $0.value.isOutput && $0.value.isMonitor == recordsMonitor }
        let positions = Set(ports.values.filter { $0.node == capture && !$0.isOutput }.map(\.channel))
        let linked = links.linkedInputs
        for (inputID, input) in ports where input.node == capture && !input.isOutput && !linked.contains(inputID) {
            for (outputID, output) in outputs
            where PipeWireAppRouter.feeds(output.channel, into: input.channel, of: positions) {
                guard let proxy = deskaudio_shim_create_link(connection.core, device, outputID, capture, inputID)
                else { continue }
                // One link per input port is enough for a stereo device; a mono one feeds both.
                links.insert(proxy, for: PipeWirePortPair(outputNode: device, output: outputID, input: inputID))
                break
            }
        }
    }
}
