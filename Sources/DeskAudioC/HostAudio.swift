import DeskAudio
import Glibc

//# 6. Host PCM: the host's own audio mixed in, and PCM encoded without a capture (a viewer's microphone)

/// Sample formats of deskaudio_push_pcm().
public enum deskaudio_pcm_format: Int32, CaseIterable {
    /// Signed 16-bit integers, native byte order.
    case DESKAUDIO_PCM_S16 = 1
    /// 32-bit floats, native byte order, nominally within ±1; NaN and infinity are refused.
    case DESKAUDIO_PCM_F32 = 2
}

/// Sends PCM the host got elsewhere (another capture API, a file, a speech engine) into
/// `capture`: `bytes` bytes of interleaved `format` samples, `channels` (1 or 2) at
/// `sample_rate` (8000 to 96000 Hz). It is resampled to 48 kHz stereo (speexdsp) and goes
/// through the same framing, gate and encoder as captured audio, mixed with it (frames carry
/// DESKAUDIO_FRAME_HOST); while nothing is captured it is framed alone, as fast as it comes.
/// Returns the frames (samples per channel) taken: all, or fewer when 1 s of audio already
/// waits, in which case push the rest later. Errors take nothing: DESKAUDIO_ERROR_INVALID_ARGUMENT
/// for a NULL capture, NULL data with bytes > 0, a byte count that is not whole frames, over
/// 960000 frames, a bad format or channel count, or a non-finite float;
/// DESKAUDIO_ERROR_NOT_SUPPORTED for a rate outside 8000–96000. Stopping the capture
/// ((false, false)) drops what still waits.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - data: the PCM, interleaved; the caller's, read during the call only.
///   - bytes: bytes at `data`: whole sample frames, at most 960000 of them.
///   - format: a deskaudio_pcm_format.
///   - channels: 1 or 2.
///   - sample_rate: 8000 to 96000 Hz.
/// - Returns: the sample frames taken (fewer than given when 1 s already waits), or a negative deskaudio_status, taking nothing.
// C: warn_unused_result
@_cdecl("deskaudio_capture_push_pcm")
public func deskaudio_capture_push_pcm(
    _ capture: deskaudio_capture?, _ data: UnsafeRawPointer?, _ bytes: size_t, _ format: Int32, _ channels: Int32,
    _ sample_rate: Int32
) -> Int32 {
    withCapture(capture) { service in
        pushingPCM(data, bytes, format) { pcm, sampleFormat throws(DeskAudioError) in
            try service.pushPCM(pcm, format: sampleFormat, channels: channels, rate: sample_rate)
        }
    }
}

/// The PCM a call hands in (`bytes` at `data`, a deskaudio_pcm_format), checked and given to
/// `body`, which returns the sample frames taken; DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL
/// data with bytes > 0 or a format that is none, else `body`'s count or error status.
func pushingPCM(
    _ data: UnsafeRawPointer?, _ bytes: size_t, _ format: Int32,
    _ body: (UnsafeRawBufferPointer, HostPCMInput.SampleFormat) throws(DeskAudioError) -> Int
) -> Int32 {
    guard data != nil || bytes == 0 else { return invalidArgument("data is NULL") }
    guard let sampleFormat = HostPCMInput.SampleFormat(rawValue: format) else {
        return invalidArgument("format \(format) is not a deskaudio_pcm_format")
    }
    return valueOrStatus { () throws(DeskAudioError) in
        Int32(try body(UnsafeRawBufferPointer(start: data, count: bytes), sampleFormat))
    }
}

/// deskaudio_capture_push_pcm() on the default capture.
@_cdecl("deskaudio_push_pcm")
public func deskaudio_push_pcm(
    _ data: UnsafeRawPointer?, _ bytes: size_t, _ format: Int32, _ channels: Int32, _ sample_rate: Int32
) -> Int32 {
    deskaudio_capture_push_pcm(defaultHandle, data, bytes, format, channels, sample_rate)
}
