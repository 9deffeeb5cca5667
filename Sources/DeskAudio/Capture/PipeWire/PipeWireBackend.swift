import CPipeWire
import Glibc

/// PipeWire's native API (libpipewire-0.3): each stream on a connection of its own.
final class PipeWireBackend: CaptureBackend {
    let kind = AudioBackend.pipewire
    var serverName: String { kind.serverName }

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, options: StreamOptions)
        throws(DeskAudioError) -> CaptureStream
    {
        let stream = PipeWireCapture(feed: feed, wake: wake)
        try stream.start(target, options: options)
        return stream
    }

    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        try query { connection, deadline throws(DeskAudioError) in
            try PipeWireDevices.read(on: connection, deadline: &deadline).devices
        }
    }

    func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        try query { connection, deadline throws(DeskAudioError) in
            try PipeWirePlaybackStreams.read(on: connection, deadline: &deadline)
        }
    }

    /// The defaults and the playing streams; mute, volume and suspension, and which sink a
    /// stream plays to, are left unknown (pipewire-pulse, through the PulseAudio API, tells them).
    func serverReport() throws(DeskAudioError) -> ServerReport {
        try query { connection, deadline throws(DeskAudioError) in
            let server = try PipeWireDevices.read(on: connection, deadline: &deadline)
            let streams = try PipeWirePlaybackStreams.read(on: connection, deadline: &deadline)
            let library = String(cString: pw_get_library_version())
            return ServerReport(
                server: "PipeWire (libpipewire \(library))",
                defaultSink: server.defaultSinkName.map {
                    ServerReport.Sink(name: $0, isMuted: nil, volumePercent: nil, isSuspended: nil)
                },
                defaultSource: server.defaultSourceName,
                defaultSourceIsMonitor: server.defaultSourceName.map { name in
                    server.devices.contains { $0.name == name && $0.kind == .sink }
                },
                playing: streams.map { ServerReport.Playing(stream: $0, sink: "") })
        }
    }

    /// Runs `body` on a connection of its own (no real-time thread), loop lock held, within 3 s.
    private func query<T>(_ body: (PipeWireConnection, inout timespec) throws(DeskAudioError) -> T)
        throws(DeskAudioError) -> T
    {
        let connection = try PipeWireConnection(name: "deskaudio-query", realTime: false)
        connection.lock()
        defer { connection.unlock() }
        var deadline = connection.deadline(afterMilliseconds: 3000)
        return try body(connection, &deadline)
    }
}
