//! DeskAudio: this machine's sound, as 10 ms Opus frames, for remote-desktop hosts.
//!
//! Use: set_audio_callback(on_frame, user_data); enable_audio(false, true); … ;
//! enable_audio(false, false). Each frame reaches on_frame as AudioFrame bytes
//! (docs/wire-format.md): a 36-byte little-endian header, then one Opus packet.
//!
//! Errors: functions that can fail return int32_t, DESKAUDIO_OK (0) or a negative
//! deskaudio_status; deskaudio_strerror() names a code and deskaudio_last_error() tells
//! what went wrong on the calling thread. No call crashes on bad input.
//!
//! Threads: every function may be called from any thread. The frame callback runs on the
//! library's own worker thread, never on an audio server's thread; from inside it,
//! set_audio_callback() and the deskaudio_set_* functions may be called, enable_audio()
//! returns DESKAUDIO_ERROR_WRONG_THREAD. A slow callback never stalls the audio server;
//! captured audio waits for it in a 0.5 s buffer, and what overflows that is dropped.
//!
//! Ownership: pointers passed to the callback are the library's and valid only during the
//! call; strings returned by the library are the library's; user_data is the host's and is
//! passed through untouched.

/// The library's version, "MAJOR.MINOR.PATCH"; static storage, never freed.
@_cdecl("deskaudio_version")
public func deskaudio_version() -> UnsafePointer<CChar>? {
    cString(libraryVersion)
}

/// A fixed English description of a deskaudio_status code (an unknown code gives
/// "unknown error"); static storage, never freed.
@_cdecl("deskaudio_strerror")
public func deskaudio_strerror(_ code: Int32) -> UnsafePointer<CChar>? {
    cString(deskaudio_status(rawValue: code)?.text ?? "unknown error")
}

/// Details of the last failure on the calling thread ("" if none). Valid until the next
/// failing DeskAudio call on the same thread; the library owns it.
@_cdecl("deskaudio_last_error")
public func deskaudio_last_error() -> UnsafePointer<CChar>? {
    LastError.message
}

let libraryVersion: StaticString = "0.1.0"

func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
