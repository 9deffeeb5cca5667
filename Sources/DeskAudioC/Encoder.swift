import DeskAudio
import DeskAudioCTypes
import Glibc

//# 6. Host PCM: the host's own audio mixed in, and PCM encoded without a capture (a viewer's microphone)

/// The sending side without a capture, for a viewer's microphone: PCM the client hands in
/// becomes AudioFrames exactly like a host's (10 ms, zero gate, sequence, sample clock,
/// capture time; flagged DESKAUDIO_FRAME_MIC), to send to the host, whose
/// deskaudio_decoder (or remote microphone) takes them. Any thread; calls on one encoder
/// are serialized.
public typealias deskaudio_encoder = OpaquePointer

/// Creates an encoder at 128 kbit/s, complexity 10 (as a capture); NULL on failure
/// (deskaudio_last_error() says why). Free it with deskaudio_encoder_destroy().
/// - Returns: a new encoder, or NULL on failure.
// C: warn_unused_result
@_cdecl("deskaudio_encoder_create")
public func deskaudio_encoder_create() -> deskaudio_encoder? {
    var created: PCMFrameEncoder?
    _ = status { () throws(DeskAudioError) in created = try PCMFrameEncoder() }
    return created.map(Handle.retained)
}

/// Frees an encoder; NULL is ignored. Not while a push on it is in progress.
/// - Parameters:
///   - encoder: the encoder to free; NULL is ignored.
@_cdecl("deskaudio_encoder_destroy")
public func deskaudio_encoder_destroy(_ encoder: deskaudio_encoder?) {
    guard let encoder else { return }
    Handle.release(encoder, as: PCMFrameEncoder.self)
}

/// Encodes `bytes` bytes of interleaved `format` PCM (a deskaudio_pcm_format), `channels`
/// (1 or 2) at `sample_rate` (8000–96000 Hz; resampled to 48 kHz stereo by speexdsp),
/// whose last sample was captured at `end_time_ns` (CLOCK_MONOTONIC; 0: now). Any chunk
/// size: audio short of a whole frame waits for the next push. Calls `callback` with
/// `user_data` once for each AudioFrame completed, on this thread, before returning; the
/// bytes are valid only during that call. Returns the frames (samples per channel) taken:
/// all of them; or a negative deskaudio_status, taking nothing: DESKAUDIO_ERROR_INVALID_ARGUMENT
/// for a NULL encoder or callback, NULL data with bytes > 0, a byte count that is not whole
/// frames, over 960000 frames, a bad format or channel count, or a non-finite float;
/// DESKAUDIO_ERROR_NOT_SUPPORTED for a rate outside 8000–96000. Allocates nothing.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - data: the PCM, interleaved; the caller's, read during the call only.
///   - bytes: bytes at `data`: whole sample frames, at most 960000 of them.
///   - format: a deskaudio_pcm_format.
///   - channels: 1 or 2.
///   - sample_rate: 8000 to 96000 Hz.
///   - end_time_ns: CLOCK_MONOTONIC ns at which the last sample was captured; 0: now.
///   - callback: called with each AudioFrame completed, on this thread, before the call returns (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the sample frames taken (all of them), or a negative deskaudio_status, taking nothing.
// C: warn_unused_result
@_cdecl("deskaudio_encoder_push_pcm")
public func deskaudio_encoder_push_pcm(
    _ encoder: deskaudio_encoder?, _ data: UnsafeRawPointer?, _ bytes: size_t, _ format: Int32, _ channels: Int32,
    _ sample_rate: Int32, _ end_time_ns: UInt64, _ callback: deskaudio_frame_callback?,
    _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    guard let encoder, let callback else { return invalidArgument("deskaudio_encoder_push_pcm: encoder or callback is NULL") }
    return pushingPCM(data, bytes, format) { pcm, sampleFormat throws(DeskAudioError) in
        try pcmEncoder(encoder).push(pcm, format: sampleFormat, channels: channels, rate: sample_rate, endTimeNs: end_time_ns) {
            frame in callback(frame.baseAddress?.assumingMemoryBound(to: UInt8.self), frame.count, user_data)
        }
    }
}

/// Echo cancellers of deskaudio_encoder_set_echo_canceller() (and of
/// deskaudio_encoder_stats.echo_canceller, where 0 is none: cancellation off).
public enum deskaudio_echo_canceller: Int32, CaseIterable {
    /// WebRTC's AEC3 where present, else speexdsp: the default.
    case DESKAUDIO_ECHO_CANCELLER_BEST = 0
    /// speexdsp's adaptive filter over a 300 ms tail and its residual echo suppressor, on
    /// every system.
    case DESKAUDIO_ECHO_CANCELLER_SPEEXDSP = 1
    /// WebRTC's AEC3, as PipeWire's echo-cancel plugin has it (spa-0.2/aec/libspa-aec-webrtc.so,
    /// loaded at run time, never linked) where PipeWire is built on webrtc-audio-processing
    /// 1.0 or later: Debian 13, not Debian 12.
    case DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3 = 2
}

/// Turns echo cancellation on or off from the next push on. On, the audio handed to
/// deskaudio_encoder_push_playback() (what the viewer is about to play) is taken out of the
/// microphone audio pushed, by the canceller deskaudio_encoder_set_echo_canceller() chose
/// (WebRTC's AEC3 where present, else speexdsp), the acoustic delay past the playback's
/// times (up to 600 ms) found from the two signals; the microphone is cancelled in mono, both
/// channels carry the result. Off by default; turned on again, it starts afresh. DESKAUDIO_OK,
/// DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL encoder, or DESKAUDIO_ERROR_OUT_OF_RESOURCES.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - enabled: true to cancel the echo of what is pushed as playback.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_encoder_set_echo_cancel")
public func deskaudio_encoder_set_echo_cancel(_ encoder: deskaudio_encoder?, _ enabled: Bool) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    return status { () throws(DeskAudioError) in try pcmEncoder(encoder).setEchoCancel(enabled) }
}

/// Chooses the echo canceller (a deskaudio_echo_canceller) that cancellation runs; one
/// running with another starts afresh with this one. DESKAUDIO_OK;
/// DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL encoder or an unknown value;
/// DESKAUDIO_ERROR_NOT_SUPPORTED, changing nothing, for DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3
/// where it cannot run (deskaudio_last_error() says why: no plugin, or one built on
/// webrtc-audio-processing 0.x).
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - canceller: a deskaudio_echo_canceller.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_encoder_set_echo_canceller")
public func deskaudio_encoder_set_echo_canceller(_ encoder: deskaudio_encoder?, _ canceller: Int32) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    guard let choice = deskaudio_echo_canceller(rawValue: canceller) else {
        return invalidArgument("deskaudio_encoder_set_echo_canceller: \(canceller) is no deskaudio_echo_canceller")
    }
    let engine: EchoEngine? =
        switch choice {
        case .DESKAUDIO_ECHO_CANCELLER_BEST: nil
        case .DESKAUDIO_ECHO_CANCELLER_SPEEXDSP: .speexdsp
        case .DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3: .webrtcAEC3
        }
    return status { () throws(DeskAudioError) in try pcmEncoder(encoder).setEchoEngine(engine) }
}

/// Hands the encoder what the viewer is about to play, as the echo to cancel: `bytes` bytes
/// of interleaved `format` PCM, `channels` (1 or 2) at `sample_rate` (8000–96000 Hz), whose
/// last sample leaves the speakers at `end_time_ns` (CLOCK_MONOTONIC; 0: now). Push it before
/// the microphone hears it (as it is queued for the device, with the device's latency added
/// to the time), and all of it: a pause in it is taken as silence. Checked as
/// deskaudio_encoder_push_pcm() checks; while echo cancellation is off, checked and dropped.
/// Returns the frames taken: all of them; or a negative deskaudio_status, taking nothing.
/// Allocates nothing. Calls on one encoder are serialized: from an audio callback, this one
/// may wait for a deskaudio_encoder_push_pcm() on another thread (its cancelling takes about
/// 0.25 ms per 10 ms of microphone audio).
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - data: the PCM, interleaved; the caller's, read during the call only.
///   - bytes: bytes at `data`: whole sample frames, at most 960000 of them.
///   - format: a deskaudio_pcm_format.
///   - channels: 1 or 2.
///   - sample_rate: 8000 to 96000 Hz.
///   - end_time_ns: CLOCK_MONOTONIC ns at which the last sample leaves the speakers; 0: now.
/// - Returns: the sample frames taken (all of them), or a negative deskaudio_status, taking nothing.
// C: warn_unused_result
@_cdecl("deskaudio_encoder_push_playback")
public func deskaudio_encoder_push_playback(
    _ encoder: deskaudio_encoder?, _ data: UnsafeRawPointer?, _ bytes: size_t, _ format: Int32, _ channels: Int32,
    _ sample_rate: Int32, _ end_time_ns: UInt64
) -> Int32 {
    guard let encoder else { return invalidArgument("deskaudio_encoder_push_playback: encoder is NULL") }
    return pushingPCM(data, bytes, format) { pcm, sampleFormat throws(DeskAudioError) in
        try pcmEncoder(encoder).pushPlayback(pcm, format: sampleFormat, channels: channels, rate: sample_rate, endTimeNs: end_time_ns)
    }
}

/// Sets the encoder's bitrate (6000–510000 bit/s) from the next frame on. DESKAUDIO_OK or
/// DESKAUDIO_ERROR_INVALID_ARGUMENT.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - bitrate: 6000 to 510000 bit/s.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_encoder_set_bitrate")
public func deskaudio_encoder_set_bitrate(_ encoder: deskaudio_encoder?, _ bitrate: Int32) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    return status { () throws(DeskAudioError) in try pcmEncoder(encoder).setBitrate(bitrate) }
}

/// Sets the encoder's complexity (0–10) from the next frame on. DESKAUDIO_OK or
/// DESKAUDIO_ERROR_INVALID_ARGUMENT.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - complexity: 0 to 10.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_encoder_set_complexity")
public func deskaudio_encoder_set_complexity(_ encoder: deskaudio_encoder?, _ complexity: Int32) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    return status { () throws(DeskAudioError) in try pcmEncoder(encoder).setComplexity(complexity) }
}

/// Marks a break in the pushed audio (the microphone closed, then opened again) after the
/// audio pushed so far: audio short of a frame is dropped, the sample clock moves on past it
/// and `skipped_samples` (48 kHz) more, and the next frame carries DESKAUDIO_FRAME_AFTER_GAP,
/// so the receiver plays silence there instead of concealing. DESKAUDIO_OK or
/// DESKAUDIO_ERROR_INVALID_ARGUMENT.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - skipped_samples: 48 kHz samples the break lasted.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_encoder_mark_gap")
public func deskaudio_encoder_mark_gap(_ encoder: deskaudio_encoder?, _ skipped_samples: UInt64) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    pcmEncoder(encoder).markDiscontinuity(skippedSamples: skipped_samples)
    return deskaudio_status.DESKAUDIO_OK.rawValue
}

/// Copies an encoder's counts into `stats`. DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT
/// for NULL pointers.
/// - Parameters:
///   - encoder: the encoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - stats: where the counts go (not NULL).
///   - stats_size: `sizeof(deskaudio_encoder_stats)` (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (NULL, or a size of 0).
@_cdecl("deskaudio_encoder_get_stats")
public func deskaudio_encoder_get_stats(
    _ encoder: deskaudio_encoder?, _ stats: UnsafeMutablePointer<deskaudio_encoder_stats>?, _ stats_size: size_t
) -> Int32 {
    guard let encoder else { return invalidArgument("encoder is NULL") }
    return copyOut(to: stats, size: stats_size, what: "stats") {
        let counters = pcmEncoder(encoder).counters
        let echo = counters.echo
        return deskaudio_encoder_stats(
            frames_encoded: counters.framesEncoded, frames_sent: counters.framesSent,
            frames_gated: counters.framesGated, bytes_sent: counters.bytesSent, echo_canceller: echo?.engine.rawValue ?? 0,
            echo_delay_ms: echo?.delayMs.map { Int32($0.rounded()) } ?? -1,
            echo_return_loss_enhancement_db: echo?.echoReturnLossEnhancementDb ?? 0, echo_blocks: echo?.blocks ?? 0,
            echo_blocks_without_playback: echo?.blocksWithoutPlayback ?? 0)
    }
}

/// The PCMFrameEncoder behind an encoder handle (retained by deskaudio_encoder_create()).
private func pcmEncoder(_ encoder: deskaudio_encoder) -> PCMFrameEncoder { Handle.object(encoder) }
