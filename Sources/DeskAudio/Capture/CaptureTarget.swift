/// What a capture stream records.
public enum CaptureTarget: Sendable, Equatable {
    /// The monitor of the default sink: what the machine plays (app audio).
    case defaultSinkMonitor
    /// The default source, which must not be a monitor: the microphone.
    case defaultSource
}
