/// Everything that can go wrong in DeskAudio, each with a message for people.
public enum DeskAudioError: Error, Equatable, Sendable {
    /// A caller passed a value outside its documented range.
    case invalidArgument(String)
    /// No audio server answered.
    case noServer(String)
    /// The audio server refused or dropped the capture stream.
    case streamFailed(String)
    /// No device of that name (or of that kind) exists on the audio server.
    case noDevice(String)
    /// The server did not answer in time.
    case timeout(String)
    /// libopus reported an error.
    case encoderFailed(String)
    /// The requested feature is not available in this build.
    case notSupported(String)
    /// A call that cannot be made from inside the audio callback was made there.
    case wrongThread(String)
    /// A resource (memory, a thread) could not be had.
    case outOfResources(String)
    /// Bytes that are not a valid AudioFrame.
    case invalidFrame(AudioFrameParser.ParseError)
    /// The caller's buffer cannot hold what would be written.
    case bufferTooSmall(String)
    /// A frame whose channels differ from those of the RTP stream it was given to.
    case formatMismatch(String)

    /// A message that says what failed and why.
    public var message: String {
        switch self {
        case .invalidArgument(let text), .noServer(let text), .streamFailed(let text), .noDevice(let text),
            .timeout(let text), .encoderFailed(let text), .notSupported(let text),
            .wrongThread(let text), .outOfResources(let text), .bufferTooSmall(let text), .formatMismatch(let text):
            text
        case .invalidFrame(let error):
            error.message
        }
    }
}
