/// PipeWire's native API (libpipewire-0.3): each stream on a connection of its own.
final class PipeWireBackend: CaptureBackend {
    let kind = AudioBackend.pipewire
    let serverName = "PipeWire"

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal) throws(DeskAudioError)
        -> CaptureStream
    {
        let stream = PipeWireCapture(feed: feed, wake: wake)
        try stream.start(target)
        return stream
    }

    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        let connection = try PipeWireConnection(name: "deskaudio-devices", realTime: false)
        connection.lock()
        defer { connection.unlock() }
        var deadline = connection.deadline(afterMilliseconds: 3000)
        return try PipeWireDevices.read(on: connection, deadline: &deadline).devices
    }
}
