import DeskAudio
import DeskAudioCTypes
import Glibc

//# 7. Receiving side: parsing and decoding AudioFrames, and the viewer's microphone on the host

/// What a remote microphone tells its host.
public enum deskaudio_remote_mic_event: Int32, CaseIterable {
    /// The first application started recording from it: ask the viewer to open its microphone.
    case DESKAUDIO_REMOTE_MIC_RECORDING_STARTED = 1
    /// The last application stopped recording from it: the viewer may close its microphone.
    case DESKAUDIO_REMOTE_MIC_RECORDING_STOPPED = 2
}

/// Called with a deskaudio_remote_mic_event and the user_data given at creation, on a thread
/// of the library's (never inside deskaudio_remote_mic_feed()); never after
/// deskaudio_remote_mic_destroy() has returned. Keep it short; it must not destroy the
/// microphone.
public typealias deskaudio_remote_mic_callback = @convention(c) (_ event: Int32, _ user_data: UnsafeMutableRawPointer?) -> Void

/// The viewer's microphone on the host: a source applications can record from, fed with the
/// AudioFrames the viewer's deskaudio_encoder made, through a jitter buffer. Feed it from any
/// thread.
public typealias deskaudio_remote_mic = OpaquePointer

/// Puts a microphone named `name` (a node name: 1–64 letters, digits, `_`, `-`, `.`), shown
/// to users as `description` (NULL: the name), on the audio server of the process's session
/// (deskaudio_set_session()): on PipeWire an Audio/Source node of its own; on a plain
/// PulseAudio daemon a source remapped from a null sink of its own. `callback` (may be NULL)
/// hears when applications start and stop recording from it. It is there when this returns
/// and goes when destroyed; when the process dies, PipeWire removes it at once, while on
/// PulseAudio its two modules stay until the next remote microphone or capture starts on
/// that server. NULL on failure (deskaudio_last_error() says why: a bad name, no server).
/// Free it with deskaudio_remote_mic_destroy().
/// - Parameters:
///   - name: the node name, 1–64 letters, digits, `_`, `-` or `.`.
///   - description: the name users see; NULL: `name`.
///   - callback: told when recording starts and stops; may be NULL.
///   - user_data: passed back to `callback` untouched.
/// - Returns: a new remote microphone, or NULL on failure.
// C: warn_unused_result
@_cdecl("deskaudio_remote_mic_create")
public func deskaudio_remote_mic_create(
    _ name: UnsafePointer<CChar>?, _ description: UnsafePointer<CChar>?, _ callback: deskaudio_remote_mic_callback?,
    _ user_data: UnsafeMutableRawPointer?
) -> deskaudio_remote_mic? {
    guard let name else {
        _ = invalidArgument("deskaudio_remote_mic_create: name is NULL")
        return nil
    }
    let userData = HostPointer(user_data)
    var created: FramePlayer?
    _ = status { () throws(DeskAudioError) in
        let microphone = try FramePlayer(
            output: .microphone(name: String(cString: name), description: description.map { String(cString: $0) } ?? ""),
            onRunning: { recording in
                let event: deskaudio_remote_mic_event =
                    recording ? .DESKAUDIO_REMOTE_MIC_RECORDING_STARTED : .DESKAUDIO_REMOTE_MIC_RECORDING_STOPPED
                callback?(event.rawValue, userData.pointer)
            })
        try microphone.start()
        created = microphone
    }
    return created.map(Handle.retained)
}

/// Takes the microphone off the server and frees it; NULL is ignored. Applications recording
/// from it see their source go. Not from inside its callback.
/// - Parameters:
///   - microphone: the microphone to remove and free; NULL is ignored.
@_cdecl("deskaudio_remote_mic_destroy")
public func deskaudio_remote_mic_destroy(_ microphone: deskaudio_remote_mic?) {
    guard let microphone else { return }
    remoteMicrophone(microphone).stop()
    Handle.release(microphone, as: FramePlayer.self)
}

/// Feeds one AudioFrame (`len` bytes) as it arrived from the network, from any thread; it
/// plays after the jitter buffer's delay. DESKAUDIO_OK (also when it was dropped because no
/// application records from the microphone now, or 640 ms already wait: the stats count it), a DESKAUDIO_ERROR_FRAME_* code for bytes that
/// are not an AudioFrame, DESKAUDIO_ERROR_NOT_SUPPORTED for a frame that is not 10 ms of
/// 48 kHz mono or stereo (mono plays on both channels), DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL pointers; a refused frame changes
/// nothing. Allocates nothing, and never waits for the audio server's thread.
/// - Parameters:
///   - microphone: the microphone (not NULL).
///   - frame: the AudioFrame (not NULL); the caller's, read during the call only.
///   - len: bytes at `frame`.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status; a refused frame changes nothing.
@_cdecl("deskaudio_remote_mic_feed")
public func deskaudio_remote_mic_feed(
    _ microphone: deskaudio_remote_mic?, _ frame: UnsafePointer<UInt8>?, _ len: size_t
) -> Int32 {
    guard let microphone, let frame else { return invalidArgument("deskaudio_remote_mic_feed: NULL pointer") }
    return status { () throws(DeskAudioError) in
        _ = try remoteMicrophone(microphone).feed(UnsafeRawBufferPointer(start: frame, count: len))
    }
}

/// Copies the microphone's counts into `stats`. DESKAUDIO_OK, or
/// DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL pointers.
/// - Parameters:
///   - microphone: the microphone (not NULL).
///   - stats: where the counts go (not NULL).
///   - stats_size: `sizeof(deskaudio_remote_mic_stats)` (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (NULL, or a size of 0).
@_cdecl("deskaudio_remote_mic_get_stats")
public func deskaudio_remote_mic_get_stats(
    _ microphone: deskaudio_remote_mic?, _ stats: UnsafeMutablePointer<deskaudio_remote_mic_stats>?,
    _ stats_size: size_t
) -> Int32 {
    guard let microphone else { return invalidArgument("microphone is NULL") }
    return copyOut(to: stats, size: stats_size, what: "stats") {
        let now = remoteMicrophone(microphone).stats
        return deskaudio_remote_mic_stats(
            frames_fed: now.framesFed, frames_refused: now.framesRefused, frames_played: now.buffer.framesPlayed,
            frames_concealed: now.buffer.framesConcealed, frames_late: now.buffer.framesLate,
            frames_inserted: now.buffer.framesInserted, frames_dropped: now.buffer.framesDropped, gaps: now.buffer.gaps,
            target_delay_ms: Int32(now.targetDelayMs), recorded: now.isRunning ? 1 : 0,
            delay_p50_ms: Int32(now.delayP50Ms), delay_p99_ms: Int32(now.delayP99Ms))
    }
}

/// The FramePlayer behind a handle (retained by deskaudio_remote_mic_create()).
private func remoteMicrophone(_ microphone: deskaudio_remote_mic) -> FramePlayer { Handle.object(microphone) }
