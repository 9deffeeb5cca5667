import DeskAudio
import Glibc

//# 2. Capture: captures, their sources and frames, their stats

/// A capture: the sources it records, its encoder settings, its frame, event and log
/// callbacks and its stats, independent of every other capture in the process (two viewers
/// at different bitrates, or one sent an app and one everything), each with its own frame
/// sequence. Create with deskaudio_capture_create(), free with deskaudio_capture_destroy().
/// The functions without a capture argument (enable_audio(), set_audio_callback(),
/// deskaudio_set_bitrate(), …) act on a default capture the library holds, exactly as they
/// always have; it is never destroyed.
public typealias deskaudio_capture = OpaquePointer

/// Called with each AudioFrame (docs/wire-format.md): `frame` points to `len` bytes that
/// are valid only during the call. Runs on the library's own delivery thread, one call at a
/// time, frames in order.
public typealias deskaudio_frame_callback =
    @convention(c) (
        _ frame: UnsafePointer<UInt8>?, _ len: size_t, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// The capture the calls without a capture argument use.
let defaultCapture = AudioService()
/// The default capture as a handle (never released).
nonisolated(unsafe) let defaultHandle = deskaudio_capture(Unmanaged.passUnretained(defaultCapture).toOpaque())

/// Runs `body` on the capture behind `handle`; DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL.
func withCapture(_ handle: deskaudio_capture?, _ body: (AudioService) -> Int32) -> Int32 {
    guard let handle else { return invalidArgument("capture is NULL") }
    return body(Handle.object(handle))
}

/// Creates a stopped capture with default settings and no callbacks; NULL on failure
/// (deskaudio_last_error() says why). Free it with deskaudio_capture_destroy().
/// - Returns: a new capture, or NULL on failure.
// C: warn_unused_result
@_cdecl("deskaudio_capture_create")
public func deskaudio_capture_create() -> deskaudio_capture? {
    Handle.retained(AudioService())
}

/// Stops the capture and frees it; NULL is ignored. Once it returns, none of the capture's
/// callbacks is called again, and the handle must not be used. Called from inside the
/// capture's own frame callback, that call is the callback's last and the capture is freed
/// just after it returns.
/// - Parameters:
///   - capture: the capture to free; NULL is ignored.
@_cdecl("deskaudio_capture_destroy")
public func deskaudio_capture_destroy(_ capture: deskaudio_capture?) {
    guard let capture else { return }
    // Stopped first: a running capture's threads hold it. From inside its own frame
    // handler it cannot wait for them: the stop runs on a library thread, which then holds
    // the last reference and frees it.
    try? Handle.object(capture, as: AudioService.self).enable(mic: false, app: false)
    Handle.release(capture, as: AudioService.self)
}

/// Starts, changes or stops `capture` so that exactly the requested sources are captured:
/// `app` is what the machine plays (the default sink's monitor, the host's own playback
/// included: a host that plays its viewer's voice leaves itself out with
/// deskaudio_capture_set_apps(capture, DESKAUDIO_APPS_ALL_EXCEPT, NULL, 0, false)), `mic`
/// the default source.
/// With both, they are mixed into one stream. (false, false) stops. Idempotent; a source
/// already running keeps running through a change. Returns DESKAUDIO_OK or a negative
/// deskaudio_status; on failure nothing this call started is left running. Blocks until
/// the audio server accepted the streams (at most 3 s each). From inside the capture's frame
/// callback only a stop is allowed: it returns DESKAUDIO_OK, that call is the callback's
/// last, and capture stops as soon as it returns; anything else there returns
/// DESKAUDIO_ERROR_WRONG_THREAD.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - mic: true to capture the microphone (the default source, or the one set).
///   - app: true to capture app audio (the default sink's monitor, or the device or applications set).
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status (DESKAUDIO_ERROR_NO_SERVER, _NO_DEVICE, _STREAM, _TIMEOUT, _WRONG_THREAD, …).
@_cdecl("deskaudio_capture_enable")
public func deskaudio_capture_enable(_ capture: deskaudio_capture?, _ mic: Bool, _ app: Bool) -> Int32 {
    withCapture(capture) { service in status { () throws(DeskAudioError) in try service.enable(mic: mic, app: app) } }
}

/// deskaudio_capture_enable() on the default capture.
@_cdecl("enable_audio")
public func enable_audio(_ mic: Bool, _ app: Bool) -> Int32 {
    deskaudio_capture_enable(defaultHandle, mic, app)
}

/// Sets the function that receives every AudioFrame of `capture`, with `user_data` passed
/// back to it; NULL unregisters. Once this returns, the previous callback is never called
/// again. Called from inside the callback, the change applies from the next frame.
/// DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL capture.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - callback: called with each AudioFrame; NULL unregisters.
///   - user_data: passed back to `callback` untouched; the host's.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_capture_set_frame_callback")
public func deskaudio_capture_set_frame_callback(
    _ capture: deskaudio_capture?, _ callback: deskaudio_frame_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    withCapture(capture) { service in
        guard let callback else {
            service.setFrameHandler(nil)
            return deskaudio_status.DESKAUDIO_OK.rawValue
        }
        let userData = HostPointer(user_data)
        service.setFrameHandler { bytes in
            callback(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, userData.pointer)
        }
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
}

/// deskaudio_capture_set_frame_callback() on the default capture.
@_cdecl("set_audio_callback")
public func set_audio_callback(_ callback: deskaudio_frame_callback?, _ user_data: UnsafeMutableRawPointer?) {
    _ = deskaudio_capture_set_frame_callback(defaultHandle, callback, user_data)
}

/// Samples (at 48 kHz) a decoder discards at the start of `capture`'s stream: the
/// encoder's look-ahead, which an Ogg Opus writer puts in OpusHead as pre-skip. Negative on
/// error.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
/// - Returns: the pre-skip in 48 kHz samples (120 at the default settings), or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_capture_pre_skip")
public func deskaudio_capture_pre_skip(_ capture: deskaudio_capture?) -> Int32 {
    withCapture(capture) { service in valueOrStatus { () throws(DeskAudioError) in try service.encoderLookahead() } }
}

/// deskaudio_capture_pre_skip() of the default capture.
@_cdecl("deskaudio_encoder_pre_skip")
public func deskaudio_encoder_pre_skip() -> Int32 {
    deskaudio_capture_pre_skip(defaultHandle)
}

/// A host's user_data pointer, carried to the worker thread untouched.
struct HostPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}

/// Chooses the audio server API for `capture`'s next start: "pipewire", "pulse"
/// (PulseAudio, or pipewire-pulse) or "auto" (PipeWire when its daemon answers, else
/// PulseAudio; the default). Overrides the DESKAUDIO_BACKEND environment variable. A source
/// already capturing keeps its backend until capture stops.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - name: "pipewire", "pulse" or "auto".
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for another name or NULL.
@_cdecl("deskaudio_capture_set_backend")
public func deskaudio_capture_set_backend(_ capture: deskaudio_capture?, _ name: UnsafePointer<CChar>?) -> Int32 {
    withCapture(capture) { service in
        guard let name else { return invalidArgument("backend name is NULL") }
        return status { () throws(DeskAudioError) in
            let text = String(cString: name)
            service.setBackend(try AudioBackend.choice(named: text, described: "backend \"\(text)\""))
        }
    }
}

/// deskaudio_capture_set_backend() on the default capture.
@_cdecl("deskaudio_set_backend")
public func deskaudio_set_backend(_ name: UnsafePointer<CChar>?) -> Int32 {
    deskaudio_capture_set_backend(defaultHandle, name)
}

/// The backend `capture` uses now: "pipewire" or "pulse", or "" while it is stopped (and
/// for a NULL capture). Static storage, never freed.
/// - Parameters:
///   - capture: the capture; NULL gives "".
/// - Returns: "pipewire", "pulse", or "" while stopped; the library's, never freed.
@_cdecl("deskaudio_capture_backend")
public func deskaudio_capture_backend(_ capture: deskaudio_capture?) -> UnsafePointer<CChar>? {
    guard let capture else { return cString("") }
    switch Handle.object(capture, as: AudioService.self).activeBackend {
    case .pipewire: return cString("pipewire")
    case .pulse: return cString("pulse")
    case nil: return cString("")
    }
}

/// deskaudio_capture_backend() of the default capture.
@_cdecl("deskaudio_backend")
public func deskaudio_backend() -> UnsafePointer<CChar>? {
    deskaudio_capture_backend(defaultHandle)
}
