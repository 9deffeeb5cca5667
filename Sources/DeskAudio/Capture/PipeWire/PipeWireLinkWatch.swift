import CPipeWire

/// Follows which node feeds a capture stream, from the registry's Link globals. When the
/// session manager relinks a stream that follows the default (the default changed, or the
/// device it had went away) PipeWire tells the stream nothing; the new links into its node
/// are the only sign. Reports the new node's name. Loop thread, or loop lock held.
final class PipeWireLinkWatch: PipeWireRegistryWatcher {
    let connection: PipeWireConnection
    private let streamNode: () -> UInt32
    private let onRelink: (String) -> Void
    var registry: PipeWireRegistry?
    private var nodeNames: [UInt32: String] = [:]
    private var feedingNode: UInt32?

    /// Watches the links into the node `streamNode` returns (read when a link appears);
    /// `onRelink` gets the name of each node that feeds it after the first.
    init(connection: PipeWireConnection, streamNode: @escaping () -> UInt32, onRelink: @escaping (String) -> Void) {
        self.connection = connection
        self.streamNode = streamNode
        self.onRelink = onRelink
    }

    func removed(_ id: UInt32) { nodeNames[id] = nil }

    func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Node":
            nodeNames[id] = properties[PW_KEY_NODE_NAME]
        case "PipeWire:Interface:Link":
            guard let input = properties[PW_KEY_LINK_INPUT_NODE].flatMap(UInt32.init), input == streamNode(),
                let output = properties[PW_KEY_LINK_OUTPUT_NODE].flatMap(UInt32.init), output != feedingNode
            else { return }
            if feedingNode != nil { onRelink(nodeNames[output] ?? "node \(output)") }
            feedingNode = output
        default:
            break
        }
    }
}
