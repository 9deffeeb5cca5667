//! DeskAudio: this machine's sound, as 10 ms Opus frames, for remote-desktop hosts.
//!
//! Use: set_audio_callback(on_frame, user_data); enable_audio(false, true); … ;
//! enable_audio(false, false). Each frame reaches on_frame as AudioFrame bytes
//! (docs/wire-format.md): a 36-byte little-endian header, then one Opus packet.
//!
//! Captures: those calls drive a default capture the library holds. A host that needs
//! several independent ones (two viewers at different bitrates, say) creates each with
//! deskaudio_capture_create() and drives it with the deskaudio_capture_* calls, which take it
//! as their first argument and behave exactly as their default-capture twins; each capture
//! has its own sources, settings, callbacks, stats and frame sequence.
//! deskaudio_capture_destroy() stops and frees one; the handle must not be used after it.
//!
//! Errors: functions that can fail return int32_t, DESKAUDIO_OK (0) or a negative
//! deskaudio_status; deskaudio_strerror() names a code and deskaudio_last_error() tells
//! what went wrong on the calling thread. No call crashes on bad input.
//!
//! Threads: every function may be called from any thread, at any time, concurrently
//! (for one capture as for several). The frame callback runs on the library's own delivery
//! thread, never on an audio server's thread. From inside it these may be called (and their
//! deskaudio_capture_* twins on its own capture): set_audio_callback(),
//! deskaudio_set_bitrate/complexity/fec/gate/bitrate_range(), deskaudio_report_packet_loss(),
//! deskaudio_get_stats(), deskaudio_backend(), deskaudio_set_backend(), the event and log
//! callback setters, the receiving-side functions and the version and error functions.
//! enable_audio(false, false) works there too: it returns DESKAUDIO_OK, the call in progress
//! is the callback's last, and capture stops just after it returns (a host that stops when
//! its send fails needs nothing more). Starting or switching sources there (enable_audio()
//! with a source on, deskaudio_set_app_device()/deskaudio_set_mic_device()) returns
//! DESKAUDIO_ERROR_WRONG_THREAD instead of deadlocking; deskaudio_list_devices() works but
//! blocks the callback while it asks the server. Event and log callbacks run on another
//! library thread, where every function may be called, enable_audio() included. A slow
//! frame callback never stalls capture or encoding: encoded frames wait for it in a queue
//! of 0.5 s (DESKAUDIO_QUEUE_FRAMES of 10 ms); when it is full the oldest frame is dropped, counted
//! (deskaudio_stats.frames_dropped_slow_callback) and the next frame delivered carries
//! DESKAUDIO_FRAME_AFTER_LOSS.
//!
//! Ownership: pointers passed to the callback are the library's and valid only during the
//! call; strings returned by the library are the library's; user_data is the host's and is
//! passed through untouched.

//# 1. Version and errors: what the header and the library are, status codes and messages

import Glibc

/// Major version of this header: a change means the API changed incompatibly.
public let DESKAUDIO_VERSION_MAJOR: Int32 = 0
/// Minor version of this header: features added, compatibly.
public let DESKAUDIO_VERSION_MINOR: Int32 = 4
/// Patch version of this header: fixes only.
public let DESKAUDIO_VERSION_PATCH: Int32 = 0
/// Encoded 10 ms frames that wait for a slow frame callback before the oldest is dropped:
/// 0.5 s. Frames of other lengths wait as many as make 0.5 s (200 of 2.5 ms, 25 of 20 ms).
public let DESKAUDIO_QUEUE_FRAMES: Int32 = 50

/// ABI generation of this header: the N of the library's SONAME, libdeskaudio.so.N.
/// A library with another ABI version cannot serve a host built against this header.
public let DESKAUDIO_ABI_VERSION: Int32 = 1

/// The loaded library's version, "MAJOR.MINOR.PATCH"; static storage, never freed.
/// - Returns: "MAJOR.MINOR.PATCH"; the library's, never freed.
@_cdecl("deskaudio_version")
public func deskaudio_version() -> UnsafePointer<CChar>? {
    UnsafePointer(versionText)
}

/// The loaded library's version as MAJOR * 10000 + MINOR * 100 + PATCH, to compare with
/// the DESKAUDIO_VERSION_* macros of the header a host was built against.
/// - Returns: MAJOR * 10000 + MINOR * 100 + PATCH.
@_cdecl("deskaudio_version_number")
public func deskaudio_version_number() -> Int32 {
    DESKAUDIO_VERSION_MAJOR * 10000 + DESKAUDIO_VERSION_MINOR * 100 + DESKAUDIO_VERSION_PATCH
}

/// The loaded library's ABI version; a host built against this header needs it to equal
/// DESKAUDIO_ABI_VERSION.
/// - Returns: the N of libdeskaudio.so.N; compare with DESKAUDIO_ABI_VERSION.
@_cdecl("deskaudio_abi_version")
public func deskaudio_abi_version() -> Int32 {
    DESKAUDIO_ABI_VERSION
}

/// A fixed English description of a deskaudio_status code (an unknown code gives
/// "unknown error"); static storage, never freed.
/// - Parameters:
///   - code: a deskaudio_status.
/// - Returns: its description; the library's, never freed.
@_cdecl("deskaudio_strerror")
public func deskaudio_strerror(_ code: Int32) -> UnsafePointer<CChar>? {
    cString(deskaudio_status(rawValue: code)?.text ?? "unknown error")
}

/// Details of the last failure on the calling thread ("" if none). Valid until the next
/// failing DeskAudio call on the same thread; the library owns it.
/// - Returns: the message, "" if none; the library's, valid until the next failing call on this thread.
@_cdecl("deskaudio_last_error")
public func deskaudio_last_error() -> UnsafePointer<CChar>? {
    LastError.message
}

// Made once, never freed, never written: the version macros as text.
nonisolated(unsafe) private let versionText: UnsafeMutablePointer<CChar> = strdup(
    "\(DESKAUDIO_VERSION_MAJOR).\(DESKAUDIO_VERSION_MINOR).\(DESKAUDIO_VERSION_PATCH)")!

func cString(_ text: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
}
