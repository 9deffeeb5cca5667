/// One audio server API as a capture uses it, what `cubeb_ops` is to cubeb: open a stream
/// for a target, list the devices. A stream watches its own target (the default it follows,
/// the device it was given) and reports changes through its feed. Capture/PipeWire and
/// Capture/Pulse each hold one; the tests drive the service with a fake one.
protocol CaptureBackend: AnyObject, Sendable {
    /// Which API this is.
    var kind: AudioBackend { get }
    /// The server it talks to, for messages: "PipeWire", "PulseAudio".
    var serverName: String { get }

    /// Starts a stream recording `target` into `feed` (48 kHz stereo floats), waking `wake`
    /// as audio arrives; returns once the server accepted it, or throws why not. Blocks up
    /// to 3 s for the server.
    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, options: StreamOptions)
        throws(DeskAudioError) -> CaptureStream

    /// The server's capture devices, read once: every sink (its monitor is app audio) and
    /// every source that is not a monitor, defaults marked. Blocks up to 3 s.
    func devices() throws(DeskAudioError) -> [CaptureDevice]

    /// The streams applications play now, read once. Blocks up to 3 s.
    func playbackStreams() throws(DeskAudioError) -> [PlaybackStream]

    /// The server's state as "why is it silent?" reads it. Blocks up to 3 s.
    func serverReport() throws(DeskAudioError) -> ServerReport
}

/// A running capture stream of any backend: it writes 48 kHz stereo floats into its feed's
/// ring and wakes the worker.
protocol CaptureStream: AnyObject {
    /// Stops capture; once it returns, nothing more is written to the feed.
    func stop()
    /// True once the server dropped the stream or went away; the stream must be reopened.
    var hasFailed: Bool { get }
}
