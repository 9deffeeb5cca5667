import CPipeWire
import Glibc

/// The session manager's default sink and source (`default.audio.sink`,
/// `default.audio.source` in its "default" metadata), read on a connection of their own.
///
/// PipeWire holds back every request of a client that has bound a metadata until the
/// metadata's owner, the session manager, answers the daemon's ping. A session manager that
/// does not answer (one stopped, or WirePlumber 0.4.13 after a restart on PipeWire 0.3.65: see
/// docs/reliability.md, R-WP-METADATA) would otherwise leave the caller's connection unanswered for good, and
/// with it the capture stream made on it.
struct PipeWireDefaults: Equatable, Sendable {
    /// The node named by `default.audio.sink`, if any.
    var sinkName: String?
    /// The node named by `default.audio.source`, if any; it may be a sink (its monitor).
    var sourceName: String?

    /// The defaults the session manager names now, or nil when it did not answer within
    /// `timeoutMs`. Throws when the daemon itself cannot be reached.
    static func read(timeoutMs: Int) throws(DeskAudioError) -> PipeWireDefaults? {
        let connection = try PipeWireConnection(name: "deskaudio-defaults", realTime: false)
        defer { connection.close() }
        connection.lock()
        defer { connection.unlock() }
        let reader = PipeWireDefaultsReader()
        defer { reader.finish() }
        var deadline = connection.deadline(afterMilliseconds: timeoutMs)
        do throws(DeskAudioError) {
            try reader.run(on: connection, deadline: &deadline)
        } catch .timeout {
            return nil
        }
        // A session manager starting names no default yet: the last one named is kept.
        remembered.withLock {
            $0.sinkName = reader.defaults.sinkName ?? $0.sinkName
            $0.sourceName = reader.defaults.sourceName ?? $0.sourceName
        }
        return reader.defaults
    }

    /// The defaults the session manager last named to this process (each nil before the
    /// first answer that named one, or the first default capture it linked): what a capture
    /// falls back on while it does not answer.
    static var lastAnswered: PipeWireDefaults { remembered.withLock { $0 } }

    /// The session manager linked a capture of the default sink's monitor to `sinkName`, or
    /// one of the default source to `sourceName`: it named that the default, as good as an
    /// answer (a capture that never read the defaults has this to fall back on, R-WP-RESTART).
    static func noteLinked(sinkName: String? = nil, sourceName: String? = nil) {
        remembered.withLock {
            $0.sinkName = sinkName ?? $0.sinkName
            $0.sourceName = sourceName ?? $0.sourceName
        }
    }

    private static let remembered = LockedValue(PipeWireDefaults())
}

/// The registry and metadata listeners behind `PipeWireDefaults.read`. Lock held.
private final class PipeWireDefaultsReader {
    private var registry: PipeWireRegistry?
    private var metadata: PipeWireMetadata?
    private(set) var defaults = PipeWireDefaults()

    /// The metadata global arrives by the first round trip, its properties (bound while
    /// globals arrive) by the second.
    func run(on connection: PipeWireConnection, deadline: inout timespec) throws(DeskAudioError) {
        registry = try PipeWireRegistry(on: connection) { [unowned self] id, type, properties in
            guard type == "PipeWire:Interface:Metadata", metadata == nil,
                properties[PW_KEY_METADATA_NAME] == PipeWireMetadata.defaultName
            else { return }
            metadata = PipeWireMetadata(id: id, type: type, registry: registry?.proxy) { [unowned self] _, key, value in
                let name = value.flatMap { $0.withCString { PipeWireDevices.name(inMetadataValue: $0) } }
                switch key {
                case "default.audio.sink": defaults.sinkName = name
                case "default.audio.source": defaults.sourceName = name
                case nil: defaults = PipeWireDefaults()  // every key removed: no defaults named
                default: break
                }
            }
        }
        try connection.roundTrip(deadline: &deadline, what: "finding the default metadata")
        try connection.roundTrip(deadline: &deadline, what: "reading the default devices")
    }

    /// Removes the listeners and destroys the proxies.
    func finish() {
        metadata?.close()
        registry?.close()
        metadata = nil
        registry = nil
    }
}
