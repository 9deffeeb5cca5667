/// What "why is it silent?" reads of an audio server, once: its name and version, its
/// default sink (muted, volume, suspended) and source, and where each application plays.
/// Fields a backend cannot read are nil.
public struct ServerReport: Sendable {
    /// A sink as the report sees it.
    public struct Sink: Sendable, Equatable {
        /// Its name, as `deskaudio devices` lists it.
        public var name: String
        /// True when muted; nil if unknown.
        public var isMuted: Bool?
        /// Its volume in percent (the mean of its channels); nil if unknown.
        public var volumePercent: Int?
        /// True when suspended (nothing plays to it); nil if unknown.
        public var isSuspended: Bool?
    }

    /// One playback stream and the sink it plays to ("" if unknown).
    public struct Playing: Sendable, Equatable {
        /// The stream.
        public var stream: PlaybackStream
        /// The name of its sink.
        public var sink: String
    }

    /// The server's name and version, "PulseAudio (on PipeWire 0.3.65) 15.0.0".
    public var server: String
    /// The default sink; nil when the server names none.
    public var defaultSink: Sink?
    /// The default source's name; nil when the server names none.
    public var defaultSource: String?
    /// True when the default source is a sink's monitor (not a microphone); nil if unknown.
    public var defaultSourceIsMonitor: Bool?
    /// The streams applications play now.
    public var playing: [Playing]
}
