import DeskAudio
import Glibc

/// Called with each AudioFrame (docs/wire-format.md): `frame` points to `len` bytes that
/// are valid only during the call. Runs on the library's own delivery thread, one call at a
/// time, frames in order.
public typealias deskaudio_frame_callback =
    @convention(c) (
        _ frame: UnsafePointer<UInt8>?, _ len: size_t, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

let service = AudioService()

/// Starts, changes or stops capture so that exactly the requested sources are captured:
/// `app` is what the machine plays (the default sink's monitor), `mic` the default source.
/// With both, they are mixed into one stream. enable_audio(false, false) stops. Idempotent;
/// a source already running keeps running through a change. Returns DESKAUDIO_OK or a
/// negative deskaudio_status; on failure nothing this call started is left running. Blocks
/// until the audio server accepted the streams (at most 3 s each). Must not be called from
/// inside the audio callback (DESKAUDIO_ERROR_WRONG_THREAD).
@_cdecl("enable_audio")
public func enable_audio(_ mic: Bool, _ app: Bool) -> Int32 {
    status { () throws(DeskAudioError) in try service.enable(mic: mic, app: app) }
}

/// Sets the function that receives every AudioFrame, with `user_data` passed back to it;
/// NULL unregisters. Once this returns, the previous callback is never called again.
/// Called from inside the callback, the change applies from the next frame.
@_cdecl("set_audio_callback")
public func set_audio_callback(_ callback: deskaudio_frame_callback?, _ user_data: UnsafeMutableRawPointer?) {
    guard let callback else {
        service.setFrameHandler(nil)
        return
    }
    let userData = HostPointer(user_data)
    service.setFrameHandler { bytes in
        callback(bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, userData.pointer)
    }
}

/// Samples (at 48 kHz) a decoder discards at the start of the stream: the encoder's
/// look-ahead, which an Ogg Opus writer puts in OpusHead as pre-skip. Negative on error.
@_cdecl("deskaudio_encoder_pre_skip")
public func deskaudio_encoder_pre_skip() -> Int32 {
    valueOrStatus { () throws(DeskAudioError) in try service.encoderLookahead() }
}

/// A host's user_data pointer, carried to the worker thread untouched.
struct HostPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}

/// Chooses the audio server API for the next enable_audio() that starts capture:
/// "pipewire", "pulse" (PulseAudio, or pipewire-pulse) or "auto" (PipeWire when its daemon
/// answers, else PulseAudio; the default). Overrides the DESKAUDIO_BACKEND environment
/// variable. A source already capturing keeps its backend until capture stops.
@_cdecl("deskaudio_set_backend")
public func deskaudio_set_backend(_ name: UnsafePointer<CChar>?) -> Int32 {
    guard let name else { return invalidArgument("backend name is NULL") }
    let text = String(cString: name)
    if text == "auto" {
        service.setBackend(nil)
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
    guard let backend = AudioBackend(rawValue: text) else {
        return invalidArgument("backend \"\(text)\" is not auto, pipewire or pulse")
    }
    service.setBackend(backend)
    return deskaudio_status.DESKAUDIO_OK.rawValue
}

/// The backend capture uses now: "pipewire" or "pulse", or "" while capture is stopped.
/// Static storage, never freed.
@_cdecl("deskaudio_backend")
public func deskaudio_backend() -> UnsafePointer<CChar>? {
    switch service.activeBackend {
    case .pipewire: cString("pipewire")
    case .pulse: cString("pulse")
    case nil: cString("")
    }
}
