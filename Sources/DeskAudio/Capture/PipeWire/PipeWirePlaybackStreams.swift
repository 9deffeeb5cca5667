import Glibc

/// The streams applications play on a PipeWire daemon, read once (PipeWireStreamWatch).
enum PipeWirePlaybackStreams {
    /// Lock held: lists them on `connection` within `deadline`.
    static func read(on connection: PipeWireConnection, deadline: inout timespec) throws(DeskAudioError)
        -> [PlaybackStream]
    {
        let watch = PipeWireStreamWatch(onUpdate: { _, _ in })
        var registryProxy: OpaquePointer?
        let registry = try PipeWireRegistry(on: connection) { id, type, properties in
            watch.global(id: id, type: type, properties: properties, registry: registryProxy)
        }
        registryProxy = registry.proxy
        defer {
            watch.finish()
            registry.close()
        }
        // Every global by the first round trip, the bound nodes' and clients' info by the second.
        try connection.roundTrip(deadline: &deadline, what: "listing playback streams")
        try connection.roundTrip(deadline: &deadline, what: "reading the playback streams' details")
        return watch.streams
    }
}
