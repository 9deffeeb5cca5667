/// A device audio can be captured from, as the audio server lists it.
public struct CaptureDevice: Sendable, Equatable {
    /// What a device is.
    public enum Kind: Int32, Sendable, CaseIterable {
        /// An output: capturing it records its monitor, what is played to it (app audio).
        case sink = 1
        /// An input that is not a monitor: a microphone.
        case source = 2
    }

    /// Sink or source.
    public var kind: Kind
    /// The server's stable name (`node.name` on PipeWire, the sink or source name on
    /// PulseAudio), as capture by name takes it.
    public var name: String
    /// A name for people.
    public var description: String
    /// True for the server's default sink, or default source.
    public var isDefault: Bool
    /// Its channels (6 for a 5.1 sink), 0 when the server did not say.
    public var channels: Int

    /// A device with every field given.
    public init(kind: Kind, name: String, description: String, isDefault: Bool, channels: Int = 0) {
        self.kind = kind
        self.name = name
        self.description = description
        self.isDefault = isDefault
        self.channels = channels
    }
}
