/// PulseAudio's API (libpulse, loaded when first used), against a PulseAudio daemon or
/// pipewire-pulse: each stream on a connection of its own.
final class PulseBackend: CaptureBackend {
    let kind = AudioBackend.pulse
    let serverName = "PulseAudio"

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal) throws(DeskAudioError)
        -> CaptureStream
    {
        let stream = PulseCapture(feed: feed, wake: wake)
        try stream.start(target)
        return stream
    }

    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        let deadline = MonotonicClock.nowNs() + 3_000_000_000
        let connection = try PulseConnection(deadline: deadline)
        connection.lock()
        defer { connection.unlock() }
        return try PulseDevices.read(on: connection, deadline: deadline)
    }
}
