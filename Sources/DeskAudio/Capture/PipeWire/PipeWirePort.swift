import CPipeWire

/// A port as the registry announces it: the node it belongs to, its direction, whether it is
/// a sink's monitor port, and its channel ("FL", "FR", …). What the watchers that link ports
/// themselves keep of each.
struct PipeWirePort {
    /// The id of the node the port belongs to.
    var node: UInt32
    /// An output port (else an input).
    var isOutput: Bool
    /// One of a sink's monitor ports.
    var isMonitor: Bool
    /// The channel position it carries; empty when the port names none.
    var channel: String

    /// The port a Port global's `properties` describe; nil when they name no node.
    init?(_ properties: PipeWireProperties) {
        guard let node = properties[PW_KEY_NODE_ID].flatMap(UInt32.init) else { return nil }
        self.node = node
        isOutput = properties[PW_KEY_PORT_DIRECTION] == "out"
        isMonitor = properties[PW_KEY_PORT_MONITOR] == "true"
        channel = properties[PW_KEY_AUDIO_CHANNEL] ?? ""
    }
}
