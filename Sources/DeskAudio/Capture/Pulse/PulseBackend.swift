/// PulseAudio's API (libpulse, loaded when first used), against a PulseAudio daemon or
/// pipewire-pulse: each stream on a connection of its own.
final class PulseBackend: CaptureBackend {
    let kind = AudioBackend.pulse
    let serverName = "PulseAudio"

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal) throws(DeskAudioError)
        -> CaptureStream
    {
        if case .applications(let selection) = target {
            if selection.mutesHost {
                throw .notSupported(
                    "muting the host needs the PipeWire backend: through the PulseAudio API this version "
                        + "does not move streams to a sink of its own")
            }
            throw .notSupported(
                "choosing applications needs the PipeWire backend: through the PulseAudio API this "
                    + "version records a sink's whole monitor only (it lists the applications, but "
                    + "does not yet record them one by one)")
        }
        let stream = PulseCapture(feed: feed, wake: wake)
        try stream.start(target)
        return stream
    }

    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        try query { connection, deadline throws(DeskAudioError) in try PulseDevices.read(on: connection, deadline: deadline) }
    }

    func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        try query { connection, deadline throws(DeskAudioError) in
            try PulsePlaybackStreams.read(on: connection, deadline: deadline)
        }
    }

    /// Runs `body` on a connection of its own, main loop lock held, within 3 s.
    private func query<T>(_ body: (PulseConnection, UInt64) throws(DeskAudioError) -> T) throws(DeskAudioError) -> T {
        let deadline = MonotonicClock.nowNs() + 3_000_000_000
        let connection = try PulseConnection(deadline: deadline)
        connection.lock()
        defer { connection.unlock() }
        return try body(connection, deadline)
    }
}
