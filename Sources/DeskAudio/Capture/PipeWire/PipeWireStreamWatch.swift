import CPipeWire
import DeskAudioShim
import Glibc

/// Follows the streams applications play on a PipeWire connection. The registry shows only
/// a few of a node's properties, so each `Stream/Output/Audio` node is bound to read all of
/// them and its state, and each client too, for the process id and binary that a native
/// client's nodes do not carry themselves. Its owner forwards the registry's globals and
/// removals. Loop thread, or loop lock held.
final class PipeWireStreamWatch {
    private final class Bound {
        let proxy: OpaquePointer
        let listener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        init(_ proxy: OpaquePointer) {
            self.proxy = proxy
            listener.initialize(to: spa_hook())
        }
        func destroy() {
            spa_hook_remove(listener)
            pw_proxy_destroy(proxy)
            listener.deallocate()
        }
    }

    private struct Details {
        var applicationName = ""
        var binary = ""
        var processID: Int32 = 0
        var nodeName = ""
        var client: UInt32?
        var isRunning = false
        var known = false  // its info has arrived
    }

    private let onUpdate: (PlaybackStream, _ first: Bool) -> Void
    private let onRemove: (PlaybackStream) -> Void
    private var nodes: [UInt32: (bound: Bound, details: Details)] = [:]
    private var clients: [UInt32: (bound: Bound, processID: Int32, binary: String, received: Bool)] = [:]
    private let nodeEvents = UnsafeMutablePointer<pw_node_events>.allocate(capacity: 1)
    private let clientEvents = UnsafeMutablePointer<pw_client_events>.allocate(capacity: 1)

    /// `onUpdate` hears of a stream each time its details are read (`first` the first time,
    /// once they are complete); `onRemove` of each stream that `onUpdate` announced and is gone.
    init(onUpdate: @escaping (PlaybackStream, Bool) -> Void, onRemove: @escaping (PlaybackStream) -> Void = { _ in }) {
        self.onUpdate = onUpdate
        self.onRemove = onRemove
        nodeEvents.initialize(to: pw_node_events())
        nodeEvents.pointee.version = UInt32(PW_VERSION_NODE_EVENTS)
        nodeEvents.pointee.info = { data, info in
            guard let data, let info else { return }
            Unmanaged<PipeWireStreamWatch>.fromOpaque(data).takeUnretainedValue().nodeInfo(info.pointee)
        }
        clientEvents.initialize(to: pw_client_events())
        clientEvents.pointee.version = UInt32(PW_VERSION_CLIENT_EVENTS)
        clientEvents.pointee.info = { data, info in
            guard let data, let info else { return }
            Unmanaged<PipeWireStreamWatch>.fromOpaque(data).takeUnretainedValue().clientInfo(info.pointee)
        }
    }

    deinit {
        nodeEvents.deallocate()
        clientEvents.deallocate()
    }

    /// The streams whose details are known, by id.
    var streams: [PlaybackStream] {
        nodes.compactMap { id, node in node.details.known ? stream(id, node.details) : nil }.sorted { $0.id < $1.id }
    }

    /// A registry global: binds playback nodes and clients.
    func global(id: UInt32, type: String, properties: PipeWireProperties, registry: OpaquePointer?) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        switch type {
        case "PipeWire:Interface:Node":
            guard properties[PW_KEY_MEDIA_CLASS] == "Stream/Output/Audio",
                let proxy = pw_registry_bind(registry, id, type, UInt32(PW_VERSION_NODE), 0)
            else { return }
            let bound = Bound(OpaquePointer(proxy))
            nodes[id] = (bound, Details())
            _ = deskaudio_shim_node_add_listener(bound.proxy, bound.listener, nodeEvents, me)
        case "PipeWire:Interface:Client":
            guard let proxy = pw_registry_bind(registry, id, type, UInt32(PW_VERSION_CLIENT), 0) else { return }
            let bound = Bound(OpaquePointer(proxy))
            clients[id] = (bound, 0, "", false)
            _ = deskaudio_shim_client_add_listener(bound.proxy, bound.listener, clientEvents, me)
        default:
            break
        }
    }

    /// A registry removal.
    func removed(_ id: UInt32) {
        if let node = nodes.removeValue(forKey: id) {
            node.bound.destroy()
            if node.details.known { onRemove(stream(id, node.details)) }
        }
        clients.removeValue(forKey: id)?.bound.destroy()
    }

    /// Unbinds everything; safe to call twice.
    func finish() {
        for node in nodes.values { node.bound.destroy() }
        for client in clients.values { client.bound.destroy() }
        nodes = [:]
        clients = [:]
    }

    private func nodeInfo(_ info: pw_node_info) {
        guard var details = nodes[info.id]?.details else { return }
        let first = !details.known
        details.isRunning = info.state == PW_NODE_STATE_RUNNING
        // Only an event that says the properties changed carries them all.
        if info.change_mask & UInt64(PW_NODE_CHANGE_MASK_PROPS) != 0, let props = info.props {
            let properties = PipeWireProperties(dict: props)
            // A later update may carry only some keys (pipewire-pulse sends such): what it
            // leaves out keeps its value.
            if let name = properties[PW_KEY_APP_NAME] { details.applicationName = name }
            if let binary = properties[PW_KEY_APP_PROCESS_BINARY] { details.binary = binary }
            if let pid = properties[PW_KEY_APP_PROCESS_ID].flatMap(Int32.init) { details.processID = pid }
            if let name = properties[PW_KEY_NODE_NAME] { details.nodeName = name }
            if let client = properties[PW_KEY_CLIENT_ID].flatMap(UInt32.init) { details.client = client }
        }
        // A native client's process is on its client, whose info may still be on its way:
        // the stream is announced once that has come (clientInfo), or now if there is none.
        if let client = details.client, let known = clients[client] {
            guard known.received || details.processID != 0 else {
                nodes[info.id]?.details = details
                return
            }
            if details.processID == 0 { details.processID = known.processID }
            if details.binary.isEmpty { details.binary = known.binary }
        }
        details.known = true
        nodes[info.id]?.details = details
        onUpdate(stream(info.id, details), first)
    }

    private func clientInfo(_ info: pw_client_info) {
        guard info.change_mask & UInt64(PW_CLIENT_CHANGE_MASK_PROPS) != 0, let props = info.props,
            clients[info.id] != nil
        else { return }
        let properties = PipeWireProperties(dict: props)
        if let pid = properties[PW_KEY_APP_PROCESS_ID].flatMap(Int32.init) { clients[info.id]?.processID = pid }
        if let binary = properties[PW_KEY_APP_PROCESS_BINARY] { clients[info.id]?.binary = binary }
        clients[info.id]?.received = true
        guard let processID = clients[info.id]?.processID, let binary = clients[info.id]?.binary else { return }
        for (id, node) in nodes where node.details.client == info.id && !node.details.known {
            var details = node.details
            if details.processID == 0 { details.processID = processID }
            if details.binary.isEmpty { details.binary = binary }
            details.known = true
            nodes[id]?.details = details
            onUpdate(stream(id, details), true)
        }
    }

    private func stream(_ id: UInt32, _ details: Details) -> PlaybackStream {
        PlaybackStream(
            id: id, applicationName: details.applicationName, binary: details.binary,
            processID: details.processID, nodeName: details.nodeName, isRunning: details.isRunning)
    }
}
