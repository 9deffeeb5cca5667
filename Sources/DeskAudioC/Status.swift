import DeskAudio

//# 1. Version and errors: what the header and the library are, status codes and messages

/// Result codes of the DeskAudio C API: 0 is success, every failure is negative.
/// deskaudio_strerror() names each; deskaudio_last_error() gives the details of the
/// last failure on the calling thread.
public enum deskaudio_status: Int32, CaseIterable {
    /// Success.
    case DESKAUDIO_OK = 0
    /// An argument is NULL, out of range or otherwise invalid.
    case DESKAUDIO_ERROR_INVALID_ARGUMENT = -1
    /// No audio server answered.
    case DESKAUDIO_ERROR_NO_SERVER = -2
    /// The audio server refused or dropped the capture stream.
    case DESKAUDIO_ERROR_STREAM = -3
    /// The audio server did not answer in time.
    case DESKAUDIO_ERROR_TIMEOUT = -4
    /// The Opus encoder failed.
    case DESKAUDIO_ERROR_ENCODER = -5
    /// The request is valid but this version cannot do it yet.
    case DESKAUDIO_ERROR_NOT_SUPPORTED = -6
    /// The function cannot be called from inside the audio callback.
    case DESKAUDIO_ERROR_WRONG_THREAD = -7
    /// Memory or a thread could not be had.
    case DESKAUDIO_ERROR_OUT_OF_RESOURCES = -8
    /// No capture device of that name (or of that kind) exists on the audio server.
    case DESKAUDIO_ERROR_NO_DEVICE = -9
    /// AudioFrame bytes: fewer than the header, or than its payload length says.
    case DESKAUDIO_ERROR_FRAME_TRUNCATED = -10
    /// AudioFrame bytes: more than header plus payload, or a payload over 1275 bytes.
    case DESKAUDIO_ERROR_FRAME_OVERSIZED = -11
    /// AudioFrame bytes: the first four bytes are not "DAFR".
    case DESKAUDIO_ERROR_FRAME_MAGIC = -12
    /// AudioFrame bytes: a layout version this library does not read.
    case DESKAUDIO_ERROR_FRAME_VERSION = -13
    /// AudioFrame bytes: a header field with a value the version does not allow.
    case DESKAUDIO_ERROR_FRAME_FIELD = -14
    /// The caller's buffer cannot hold the packet or text (its DESKAUDIO_RTP_MAX_* size always can).
    case DESKAUDIO_ERROR_BUFFER_TOO_SMALL = -15
    /// RTP: a frame whose channels differ from the stream's (a surround frame into a stereo stream).
    case DESKAUDIO_ERROR_RTP_FORMAT = -16
}

extension deskaudio_status {
    init(_ error: DeskAudioError) {
        switch error {
        case .invalidArgument: self = .DESKAUDIO_ERROR_INVALID_ARGUMENT
        case .noServer: self = .DESKAUDIO_ERROR_NO_SERVER
        case .streamFailed: self = .DESKAUDIO_ERROR_STREAM
        case .timeout: self = .DESKAUDIO_ERROR_TIMEOUT
        case .encoderFailed: self = .DESKAUDIO_ERROR_ENCODER
        case .notSupported: self = .DESKAUDIO_ERROR_NOT_SUPPORTED
        case .wrongThread: self = .DESKAUDIO_ERROR_WRONG_THREAD
        case .outOfResources: self = .DESKAUDIO_ERROR_OUT_OF_RESOURCES
        case .noDevice: self = .DESKAUDIO_ERROR_NO_DEVICE
        case .invalidFrame(.truncated): self = .DESKAUDIO_ERROR_FRAME_TRUNCATED
        case .invalidFrame(.oversized): self = .DESKAUDIO_ERROR_FRAME_OVERSIZED
        case .invalidFrame(.wrongMagic): self = .DESKAUDIO_ERROR_FRAME_MAGIC
        case .invalidFrame(.unknownVersion): self = .DESKAUDIO_ERROR_FRAME_VERSION
        case .invalidFrame(.invalidField): self = .DESKAUDIO_ERROR_FRAME_FIELD
        case .bufferTooSmall: self = .DESKAUDIO_ERROR_BUFFER_TOO_SMALL
        case .formatMismatch: self = .DESKAUDIO_ERROR_RTP_FORMAT
        }
    }

    /// A fixed description, with static storage (never freed).
    var text: StaticString {
        switch self {
        case .DESKAUDIO_OK: "success"
        case .DESKAUDIO_ERROR_INVALID_ARGUMENT: "invalid argument"
        case .DESKAUDIO_ERROR_NO_SERVER: "no audio server"
        case .DESKAUDIO_ERROR_STREAM: "capture stream failed"
        case .DESKAUDIO_ERROR_TIMEOUT: "audio server timed out"
        case .DESKAUDIO_ERROR_ENCODER: "Opus encoder error"
        case .DESKAUDIO_ERROR_NOT_SUPPORTED: "not supported"
        case .DESKAUDIO_ERROR_WRONG_THREAD: "not callable from the audio callback"
        case .DESKAUDIO_ERROR_OUT_OF_RESOURCES: "out of resources"
        case .DESKAUDIO_ERROR_NO_DEVICE: "no such capture device"
        case .DESKAUDIO_ERROR_FRAME_TRUNCATED: "AudioFrame truncated"
        case .DESKAUDIO_ERROR_FRAME_OVERSIZED: "AudioFrame oversized"
        case .DESKAUDIO_ERROR_FRAME_MAGIC: "not an AudioFrame"
        case .DESKAUDIO_ERROR_FRAME_VERSION: "unknown AudioFrame version"
        case .DESKAUDIO_ERROR_FRAME_FIELD: "invalid AudioFrame field"
        case .DESKAUDIO_ERROR_BUFFER_TOO_SMALL: "buffer too small"
        case .DESKAUDIO_ERROR_RTP_FORMAT: "frame does not fit the RTP stream"
        }
    }
}

/// Runs `body`; on failure records the message for deskaudio_last_error() and returns the code.
func status(_ body: () throws(DeskAudioError) -> Void) -> Int32 {
    do {
        try body()
        return deskaudio_status.DESKAUDIO_OK.rawValue
    } catch {
        LastError.record(error.message)
        return deskaudio_status(error).rawValue
    }
}

/// Runs `body`, which returns a value ≥ 0 (a count, a bitrate); on failure records the
/// message for deskaudio_last_error() and returns the negative code instead.
func valueOrStatus(_ body: () throws(DeskAudioError) -> Int32) -> Int32 {
    var value: Int32 = 0
    let result = status { () throws(DeskAudioError) in value = try body() }
    return result == deskaudio_status.DESKAUDIO_OK.rawValue ? value : result
}

/// Records an invalid-argument failure and returns its code.
func invalidArgument(_ message: String) -> Int32 {
    LastError.record(message)
    return deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue
}

/// Writes what `value` makes into a struct the host allocated at `destination`, `size` bytes
/// long (the host's `sizeof`, from the header it was built with): the first min(`size`, our
/// size) bytes, and zeros past our size. Such structs grow only by fields appended at the
/// end, so a host built with an older or newer header gets every field both know and nothing
/// written past its struct. Returns DESKAUDIO_OK, DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL
/// or a size of 0, or the code `value` throws; writes nothing unless DESKAUDIO_OK.
func copyOut<Value>(
    to destination: UnsafeMutablePointer<Value>?, size: Int, what: String, _ value: () throws(DeskAudioError) -> Value
) -> Int32 {
    guard let destination else { return invalidArgument("\(what) is NULL") }
    guard size > 0 else { return invalidArgument("\(what)_size is 0: pass sizeof the struct") }
    return status { () throws(DeskAudioError) in
        let made = try value()
        let raw = UnsafeMutableRawPointer(destination)
        let known = MemoryLayout<Value>.size
        withUnsafeBytes(of: made) { raw.copyMemory(from: $0.baseAddress!, byteCount: min(size, known)) }
        if size > known { (raw + known).initializeMemory(as: UInt8.self, repeating: 0, count: size - known) }
    }
}
