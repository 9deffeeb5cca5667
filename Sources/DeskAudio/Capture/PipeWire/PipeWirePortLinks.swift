/// One link a watcher made itself: from `output` (a port of node `outputNode`) to `input`.
struct PipeWirePortPair: Hashable {
    var outputNode: UInt32
    var output: UInt32
    var input: UInt32
}

/// The links a watcher made itself, by the ports they join. A link dies with either of its
/// ports, so one whose port or source node goes is forgotten here too and made again when
/// ports come back, also under a reused id (R-WP-PORTS).
struct PipeWirePortLinks<Link> {
    private var links: [PipeWirePortPair: Link] = [:]

    func contains(_ pair: PipeWirePortPair) -> Bool { links[pair] != nil }

    /// The input ports some link goes to.
    var linkedInputs: Set<UInt32> { Set(links.keys.map(\.input)) }

    mutating func insert(_ link: Link, for pair: PipeWirePortPair) { links[pair] = link }

    /// Forgets the links with an end on `id` (a port at either end, or the node whose output
    /// ports they start at) and returns them, for the caller to destroy.
    mutating func remove(touching id: UInt32) -> [Link] {
        let gone = links.keys.filter { $0.output == id || $0.input == id || $0.outputNode == id }
        return gone.compactMap { links.removeValue(forKey: $0) }
    }

    /// Forgets every link and returns them, for the caller to destroy.
    mutating func removeAll() -> [Link] {
        defer { links = [:] }
        return Array(links.values)
    }
}
