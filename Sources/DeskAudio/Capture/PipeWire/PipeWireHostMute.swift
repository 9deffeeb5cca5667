import CPipeWire
import DeskAudioShim
import Glibc
import Synchronization

/// Keeps what a capture records off the machine's speakers without touching the default sink:
/// a silent sink of its own (`deskaudio-mute-<pid>-<n>`), and each muted stream sent there by
/// its `target.object` in the session manager's "default" metadata (what pavucontrol's "move"
/// writes), so the session manager relinks it. The capture still gets the stream through the
/// router's own links.
///
/// It holds a PipeWire connection of its own that owns no client-side node: binding the
/// metadata makes the daemon hold the binding client's requests until the session manager
/// answers a ping, and the session manager can be waiting on the capture stream's node,
/// which lives in this process (seen on PipeWire 0.3.65: the capture's connection hung).
///
/// Undone three ways: a stream unmuted, or the mute finished, gets back the target it had
/// (none: it follows the default sink again); when this process dies, its sink vanishes with
/// its connection and the session manager, finding no node of that name, links the stream to
/// the default sink; and the next mute started on the server (`start`) gives a stream left
/// pointing at a sink that is gone the target it had before. A stream moved elsewhere while
/// muted (by the user) is left where it was put. `mute` and `unmute` may be called from any
/// thread; `start` and `finish` from the owner's.
final class PipeWireHostMute: PipeWireRegistryListener {
    /// The start of every mute sink's node name.
    static let sinkNamePrefix = "deskaudio-mute-"
    /// The metadata key the session manager reads a stream's target from.
    private static let targetKey = "target.object"
    /// Where the target a stream had before it was muted is kept ("" for none), so that a
    /// later process can give it back if this one dies.
    private static let savedTargetKey = "deskaudio.target-before-mute"
    private static let sinksMade = Atomic<Int>(0)

    /// The node name of this mute's sink.
    let sinkName: String
    private var connection: PipeWireConnection?
    private var registry: PipeWireRegistry?
    private var sink: OpaquePointer?
    private var metadata: PipeWireMetadata?
    // The rest: this mute's loop lock held.
    private var nodeNames: [UInt32: String] = [:]
    /// Per subject: the properties read from the metadata (targetKey and savedTargetKey).
    private var properties: [UInt32: [String: String]] = [:]
    /// Streams sent to the sink, with the target each had before (nil: none).
    private var muted: [UInt32: String?] = [:]
    /// Streams to mute that this connection's registry has not announced yet. The daemon
    /// refuses a metadata write about a global newer than the writer has seen (a stale id,
    /// to it: PipeWire's `recv_generation`), and says so only in an error event; the capture
    /// learns of a stream on its own connection, which may be ahead of this one.
    private var waitingForGlobal: Set<UInt32> = []
    /// Streams given back whose saved target the metadata has not yet reported removed.
    private var givingBack: Set<UInt32> = []

    /// Where a mute given up is told (a stream moved elsewhere while muted).
    private let notices: NoticeBoard?

    /// A mute that tells `notices` what it gives up; nothing happens before `start`.
    init(notices: NoticeBoard? = nil) {
        self.notices = notices
        let number = PipeWireHostMute.sinksMade.add(1, ordering: .relaxed).newValue
        sinkName = "\(PipeWireHostMute.sinkNamePrefix)\(getpid())-\(number)"
    }

    /// Connects, reads the nodes and the metadata, makes the sink and mends what a killed
    /// mute left; blocks up to `timeoutMs`. After a throw, `finish` cleans up.
    func start(timeoutMs: Int = 3000) throws(DeskAudioError) {
        let connection = try PipeWireConnection(name: "deskaudio-mute", realTime: false)
        self.connection = connection
        connection.lock()
        defer { connection.unlock() }
        var deadline = connection.deadline(afterMilliseconds: timeoutMs)
        registry = try PipeWireRegistry(on: connection, for: self)
        try connection.roundTrip(deadline: &deadline, what: "listing the nodes")
        try connection.roundTrip(deadline: &deadline, what: "reading the streams' targets")
        guard metadata != nil else {
            throw .notSupported(
                "muting the host needs a session manager (WirePlumber) that keeps the \"default\" metadata")
        }
        guard let proxy = deskaudio_shim_create_null_sink(connection.core, sinkName, "DeskAudio: host muted", 0) else {
            throw .outOfResources("cannot create the sink that mutes the host: \(PipeWireConnection.errnoText())")
        }
        sink = proxy
        repairLeftovers()
    }

    /// Keeps `stream` (a node id) off the speakers: at once if this connection has seen the
    /// stream's global, else when it does.
    func mute(_ stream: UInt32) {
        guard let connection else { return }
        connection.lock()
        defer { connection.unlock() }
        guard nodeNames[stream] != nil else {
            waitingForGlobal.insert(stream)
            return
        }
        send(stream)
    }

    // Lock held, the stream's global seen: sends it to the sink.
    private func send(_ stream: UInt32) {
        guard muted[stream] == nil, let metadata else { return }
        let before = properties[stream]?[PipeWireHostMute.targetKey]
        muted[stream] = .some(before)
        metadata.set(stream, PipeWireHostMute.savedTargetKey, to: before ?? "")
        metadata.set(stream, PipeWireHostMute.targetKey, to: sinkName)
        notices?.log(.debug, "host mute: stream \(stream) sent to \(sinkName) (its target before: \(before ?? "none"))")
    }

    /// Gives `stream` back the target it had.
    func unmute(_ stream: UInt32) {
        guard let connection else { return }
        connection.lock()
        defer { connection.unlock() }
        waitingForGlobal.remove(stream)
        giveBack(stream)
    }

    /// Every muted stream gets its target back (waiting up to 1 s for the metadata to report
    /// the changes), the sink goes, the connection closes; safe to call twice.
    func finish() {
        guard let connection else { return }
        connection.lock()
        waitingForGlobal = []
        for stream in Array(muted.keys) { giveBack(stream) }
        // The "default" metadata is the session manager's (WirePlumber exports it): the
        // daemon's answer to a sync does not say the session manager took the changes (a
        // listing right after the stop still showed the mute's keys: clean-clone run 38,
        // WirePlumber 0.5.8), the metadata's own events do.
        var deadline = connection.deadline(afterMilliseconds: 1000)
        while !givingBack.isEmpty {
            do {
                try connection.roundTrip(deadline: &deadline, what: "giving the muted streams their targets back")
            } catch {
                notices?.log(.warning, "host mute: \(error); streams \(givingBack.sorted()) may keep the mute's target")
                break
            }
        }
        givingBack = []
        metadata?.close()
        metadata = nil
        if let sink { pw_proxy_destroy(sink) }
        sink = nil
        registry?.close()
        registry = nil
        connection.unlock()
        connection.close()
        self.connection = nil
    }

    // Lock held.
    private func giveBack(_ stream: UInt32) {
        guard let before = muted.removeValue(forKey: stream), let metadata else { return }
        metadata.set(stream, PipeWireHostMute.targetKey, to: before)
        metadata.set(stream, PipeWireHostMute.savedTargetKey, to: nil)
        givingBack.insert(stream)
    }

    func global(id: UInt32, type: String, properties: PipeWireProperties) {
        switch type {
        case "PipeWire:Interface:Node":
            nodeNames[id] = properties[PW_KEY_NODE_NAME] ?? ""
            if waitingForGlobal.remove(id) != nil { send(id) }
        case "PipeWire:Interface:Metadata":
            guard metadata == nil, properties[PW_KEY_METADATA_NAME] == PipeWireMetadata.defaultName else { return }
            metadata = PipeWireMetadata(id: id, type: type, registry: registry?.proxy) { [unowned self] in
                propertyChanged($0, $1, $2)
            }
        default:
            break
        }
    }

    func removed(_ id: UInt32) {
        nodeNames[id] = nil
        waitingForGlobal.remove(id)
        muted[id] = nil
        properties[id] = nil
        givingBack.remove(id)
    }

    private func propertyChanged(_ subject: UInt32, _ key: String?, _ value: String?) {
        guard let key else {
            // Every property of the subject removed (of every subject: everySubject), ours with
            // them: a reset, not a move (the session manager leaves the stream where it is, on
            // the mute's sink). A muted stream gets both written again, so the mute holds and a
            // later process can still give back the target it had.
            let cleared = subject == PipeWireMetadata.everySubject ? Array(muted.keys) : [subject]
            if subject == PipeWireMetadata.everySubject {
                properties = [:]
                givingBack = []
            } else {
                properties[subject] = nil
                givingBack.remove(subject)
            }
            for stream in cleared {
                guard let before = muted.removeValue(forKey: stream) else { continue }
                properties[stream] = before.map { [PipeWireHostMute.targetKey: $0] }
                send(stream)
                notices?.log(.info, "host mute: stream \(stream)'s metadata was cleared while muted: its mute written again")
            }
            return
        }
        guard key == PipeWireHostMute.targetKey || key == PipeWireHostMute.savedTargetKey else { return }
        properties[subject, default: [:]][key] = value
        if key == PipeWireHostMute.savedTargetKey, value == nil { givingBack.remove(subject) }
        // Moved elsewhere while muted: the user's choice stands, nothing to give back.
        if key == PipeWireHostMute.targetKey, muted[subject] != nil, value != sinkName {
            muted[subject] = nil
            metadata?.set(subject, PipeWireHostMute.savedTargetKey, to: nil)
            notices?.log(
                .info, "host mute: stream \(subject) was sent to \(value ?? "the default sink") while muted: left there, not muted")
        }
    }

    // A stream still sent to a mute sink that no longer exists (its process was killed) gets
    // back the target it had before.
    private func repairLeftovers() {
        let existing = Set(nodeNames.values)
        for (subject, values) in properties {
            guard let target = values[PipeWireHostMute.targetKey], target.hasPrefix(PipeWireHostMute.sinkNamePrefix),
                !existing.contains(target)
            else { continue }
            let saved = values[PipeWireHostMute.savedTargetKey]
            metadata?.set(subject, PipeWireHostMute.targetKey, to: saved.flatMap { $0.isEmpty ? nil : $0 })
            metadata?.set(subject, PipeWireHostMute.savedTargetKey, to: nil)
        }
    }
}
