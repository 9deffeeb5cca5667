import CPipeWire

/// Follows which node feeds a capture stream, from the registry's Link globals. When the
/// session manager relinks a stream that follows the default (the default changed, or the
/// device it had went away) PipeWire tells the stream nothing; the new links into its node
/// are the only sign. Reports each node that comes to feed it. Loop thread, or loop lock held.
final class PipeWireLinkWatch: PipeWireRegistryWatcher {
    /// A node that feeds the stream now.
    struct Feeder {
        /// Its node.name ("node ID" when the registry did not name it).
        let name: String
        /// True for a sink (the stream reads its monitor), false for a source or a stream.
        let isSink: Bool
        /// True for the first node seen feeding the stream, false for a relink.
        let isFirst: Bool
        /// Its node.name when it is a device (a sink or a source), nil otherwise.
        let device: String?
    }

    let connection: PipeWireConnection
    private let streamNode: () -> UInt32
    private let onLinked: (Feeder) -> Void
    private let onSinkFeeding: (String?) -> Void
    var registry: PipeWireRegistry?
    private var nodes: [UInt32: (name: String?, isSink: Bool, isDevice: Bool)] = [:]
    /// The stream's links now: link id → the node it comes from.
    private var links: [UInt32: UInt32] = [:]
    private var feedingNode: UInt32?
    /// Whether a sink (its monitor) feeds the stream, as last told.
    private var sinkFeeds = false

    /// Watches the links into the node `streamNode` returns (read when a link appears):
    /// `onLinked` gets each node that comes to feed it, `onSinkFeeding` the name of a sink
    /// whose monitor feeds it through any of its links (nil: none), whenever that changes.
    init(
        connection: PipeWireConnection, streamNode: @escaping () -> UInt32, onLinked: @escaping (Feeder) -> Void,
        onSinkFeeding: @escaping (String?) -> Void
    ) {
        self.connection = connection
        self.streamNode = streamNode
        self.onLinked = onLinked
        self.onSinkFeeding = onSinkFeeding
    }

    func removed(_ id: UInt32) {
        nodes[id] = nil
        if links.removeValue(forKey: id) != nil { judgeSinkFeeding() }
    }

    func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Node":
            let mediaClass = properties[PW_KEY_MEDIA_CLASS] ?? ""
            nodes[id] = (
                properties[PW_KEY_NODE_NAME], mediaClass.hasSuffix("/Sink"),
                mediaClass == "Audio/Sink" || mediaClass.hasPrefix("Audio/Source")
            )
        case "PipeWire:Interface:Link":
            guard let input = properties[PW_KEY_LINK_INPUT_NODE].flatMap(UInt32.init), input == streamNode(),
                let output = properties[PW_KEY_LINK_OUTPUT_NODE].flatMap(UInt32.init)
            else { return }
            links[id] = output
            if output != feedingNode {
                let node = nodes[output]
                onLinked(
                    Feeder(
                        name: node?.name ?? "node \(output)", isSink: node?.isSink ?? false, isFirst: feedingNode == nil,
                        device: node?.isDevice == true ? node?.name : nil))
                feedingNode = output
            }
            judgeSinkFeeding()
        default:
            break
        }
    }

    private func judgeSinkFeeding() {
        let sink = links.values.first { nodes[$0]?.isSink == true }
        guard (sink != nil) != sinkFeeds else { return }
        sinkFeeds = sink != nil
        onSinkFeeding(sink.map { nodes[$0]?.name ?? "node \($0)" })
    }
}
