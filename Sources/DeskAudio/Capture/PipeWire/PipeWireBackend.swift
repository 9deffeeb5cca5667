import Glibc

/// PipeWire's native API (libpipewire-0.3): each stream on a connection of its own.
final class PipeWireBackend: CaptureBackend {
    let kind = AudioBackend.pipewire
    let serverName = "PipeWire"

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, linkingItself: Bool)
        throws(DeskAudioError) -> CaptureStream
    {
        let stream = PipeWireCapture(feed: feed, wake: wake)
        try stream.start(target, linkingItself: linkingItself)
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
