/// PulseAudio's API (libpulse, loaded when first used), against a PulseAudio daemon or
/// pipewire-pulse: each stream on a connection of its own.
final class PulseBackend: CaptureBackend {
    let kind = AudioBackend.pulse
    let serverName = "PulseAudio"

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal) throws(DeskAudioError)
        -> CaptureStream
    {
        try query { connection, deadline throws(DeskAudioError) in
            try PulseHostMute.mendLeftovers(on: connection, deadline: deadline)
        }
        guard case .applications(let selection) = target else {
            let stream = PulseCapture(feed: feed, wake: wake)
            try stream.start(target)
            return stream
        }
        // The API records a sink's monitor, not a stream: chosen applications are recorded by
        // moving them to a sink of the library's, which keeps them off the speakers too.
        guard selection.mutesHost else {
            throw .notSupported(
                "choosing applications without muting the host needs the PipeWire backend: through "
                    + "the PulseAudio API this version records them only by moving them to a sink of "
                    + "its own, which takes them off the speakers (set the mute too)")
        }
        let mute = PulseHostMute(selection: selection)
        do throws(DeskAudioError) { try mute.start() } catch {
            mute.finish()
            throw error
        }
        let stream = PulseCapture(feed: feed, wake: wake, hostMute: mute)
        try stream.start(.sinkMonitor(named: mute.sinkName))
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
