import DeskAudio
import DeskAudioCTypes
import Glibc

//# 7. Receiving side: parsing and decoding AudioFrames, and the viewer's microphone on the host


/// Bits of deskaudio_frame_info.flags.
public enum deskaudio_frame_flag: Int32, CaseIterable {
    /// The first frame sent after the sender held frames back (silence, a capture restart).
    case DESKAUDIO_FRAME_AFTER_GAP = 1
    /// App audio (what the machine plays) is in the frame.
    case DESKAUDIO_FRAME_APP = 2
    /// Microphone audio is in the frame.
    case DESKAUDIO_FRAME_MIC = 4
    /// PCM the host delivered (deskaudio_push_pcm) is in the frame.
    case DESKAUDIO_FRAME_HOST = 8
    /// The sender dropped the frames just before this one: its host's frame callback fell
    /// more than 0.5 s behind (DESKAUDIO_QUEUE_FRAMES frames of 10 ms). The sequence has a hole there.
    case DESKAUDIO_FRAME_AFTER_LOSS = 16
    /// The frame's capture_time_ns does not follow from the last frame's (its time plus the
    /// samples between them; right after the last frame, by more than 0.05 ms, or 0.5 ms in
    /// the first 2 s of a clock's line): the server's clock stepped or another source's clock
    /// took over; a host pairing audio with video re-anchors here.
    case DESKAUDIO_FRAME_TIME_STEP = 32
}

/// Reads AudioFrame bytes into `info`. Returns DESKAUDIO_OK, or a DESKAUDIO_ERROR_FRAME_*
/// code naming what is wrong (DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL pointers or an
/// `info_size` of 0); `info` is written only on success. Any thread.
/// - Parameters:
///   - bytes: the AudioFrame (not NULL); the caller's.
///   - len: bytes at `bytes`.
///   - info: where the fields go (not NULL); its `payload` points into `bytes`.
///   - info_size: `sizeof(deskaudio_frame_info)` (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK, or a DESKAUDIO_ERROR_FRAME_* code naming what is wrong (DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL).
// C: warn_unused_result
@_cdecl("deskaudio_parse_frame")
public func deskaudio_parse_frame(
    _ bytes: UnsafePointer<UInt8>?, _ len: size_t, _ info: UnsafeMutablePointer<deskaudio_frame_info>?,
    _ info_size: size_t
) -> Int32 {
    guard let bytes else { return invalidArgument("deskaudio_parse_frame: bytes is NULL") }
    return copyOut(to: info, size: info_size, what: "info") { () throws(DeskAudioError) in
        let frame: AudioFrameParser.Frame
        do throws(AudioFrameParser.ParseError) {
            frame = try AudioFrameParser.parse(UnsafeRawBufferPointer(start: bytes, count: len))
        } catch {
            throw .invalidFrame(error)
        }
        let header = frame.header
        return deskaudio_frame_info(
            sample_clock: header.sampleClock, capture_time_ns: header.captureTimeNs,
            payload: frame.payload.baseAddress?.assumingMemoryBound(to: UInt8.self), sequence: header.sequence,
            sample_rate: header.sampleRate, payload_length: UInt32(frame.payload.count),
            frame_samples: header.frameSamples, version: header.version,
            flags: header.flags.rawValue, channels: header.channels, codec: header.codec)
    }
}

/// A decoder for one stream of AudioFrames (the receiving side): 48 kHz stereo float out
/// (surround frames folded to stereo: docs/wire-format.md), frames lost in transit
/// concealed. Use it from one thread at a time.
public typealias deskaudio_decoder = OpaquePointer


/// Samples per channel of output that always suffice for deskaudio_decoder_decode(): the
/// longest concealment (100 ms) plus the longest frame the wire format allows (60 ms).
public let DESKAUDIO_DECODER_MAX_SAMPLES: Int32 = 7680

/// Creates a decoder; NULL on failure (deskaudio_last_error() says why). Free it with
/// deskaudio_decoder_destroy().
/// - Returns: a new decoder writing stereo, or NULL on failure.
// C: warn_unused_result
@_cdecl("deskaudio_decoder_create")
public func deskaudio_decoder_create() -> deskaudio_decoder? {
    var created: FrameReceiver?
    _ = status { () throws(DeskAudioError) in created = try FrameReceiver() }
    return created.map(Handle.retained)
}

/// deskaudio_decoder_create_with_output(): each frame's own channels.
public let DESKAUDIO_DECODER_AS_SENT: Int32 = 0

/// The most channels a decoder writes (7.1).
public let DESKAUDIO_DECODER_MAX_CHANNELS: Int32 = 8

/// Creates a decoder writing `channels`: 2 is deskaudio_decoder_create() (surround folded to
/// stereo: L = FL + 0.707 FC + 0.707 RL (+ 0.707 SL), R likewise, LFE left out), and
/// DESKAUDIO_DECODER_AS_SENT writes each frame's own channels in the servers' order (FL FR
/// FC LFE RL RR SL SR: 6 for 5.1, 8 for 7.1; mono and stereo frames as 2), for a viewer with
/// surround speakers; deskaudio_decoder_get_channels() says how many the last frame had, and
/// `pcm` must then hold `max_samples` × DESKAUDIO_DECODER_MAX_CHANNELS floats. Anything else:
/// NULL with DESKAUDIO_ERROR_INVALID_ARGUMENT (deskaudio_last_error() says why).
/// - Parameters:
///   - channels: 2, or DESKAUDIO_DECODER_AS_SENT.
/// - Returns: a new decoder, or NULL (DESKAUDIO_ERROR_INVALID_ARGUMENT for another value).
// C: warn_unused_result
@_cdecl("deskaudio_decoder_create_with_output")
public func deskaudio_decoder_create_with_output(_ channels: Int32) -> deskaudio_decoder? {
    var created: FrameReceiver?
    _ = status { () throws(DeskAudioError) in
        switch channels {
        case 2: created = try FrameReceiver(output: .stereo)
        case DESKAUDIO_DECODER_AS_SENT: created = try FrameReceiver(output: .asSent)
        default: throw .invalidArgument("decoder output \(channels) is not 2 or DESKAUDIO_DECODER_AS_SENT (0)")
        }
    }
    return created.map(Handle.retained)
}

/// Interleaved channels of what deskaudio_decoder_decode() wrote last: 2, or for a decoder
/// made with DESKAUDIO_DECODER_AS_SENT the last frame's (2 until one arrives); a negative
/// deskaudio_status for NULL.
/// - Parameters:
///   - decoder: the decoder (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
/// - Returns: 1 to 8 channels, or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_decoder_get_channels")
public func deskaudio_decoder_get_channels(_ decoder: deskaudio_decoder?) -> Int32 {
    guard let decoder else { return invalidArgument("deskaudio_decoder_get_channels: decoder is NULL") }
    return Int32(receiver(of: decoder).channels)
}

/// Frees a decoder; NULL is ignored.
/// - Parameters:
///   - decoder: the decoder to free; NULL is ignored.
@_cdecl("deskaudio_decoder_destroy")
public func deskaudio_decoder_destroy(_ decoder: deskaudio_decoder?) {
    guard let decoder else { return }
    Handle.release(decoder, as: FrameReceiver.self)
}

/// Decodes one AudioFrame into `pcm` (interleaved float, 48 kHz: stereo, or as sent for a
/// decoder made so), which holds `max_samples` samples per channel (of 2 channels, or of
/// DESKAUDIO_DECODER_MAX_CHANNELS as sent). Returns the samples per channel written: first the
/// concealment of frames lost just before this one, if any, then the frame (its
/// frame_samples: 480 for 10 ms, 120 to 960 for the other lengths a sender may choose); 0 for a
/// late or repeated frame; or a negative deskaudio_status (a DESKAUDIO_ERROR_FRAME_* code
/// for bad bytes; DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL pointers or room for less than
/// the frame). With DESKAUDIO_DECODER_MAX_SAMPLES of room nothing is ever cut short.
/// - Parameters:
///   - decoder: the decoder (not NULL).
///   - frame: the AudioFrame (not NULL); the caller's.
///   - len: bytes at `frame`.
///   - pcm: where the 48 kHz float samples go (not NULL): `max_samples` × 2 floats, or × DESKAUDIO_DECODER_MAX_CHANNELS as sent.
///   - max_samples: samples per channel `pcm` holds; DESKAUDIO_DECODER_MAX_SAMPLES always suffices.
/// - Returns: the samples per channel written (0 for a late or repeated frame), or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_decoder_decode")
public func deskaudio_decoder_decode(
    _ decoder: deskaudio_decoder?, _ frame: UnsafePointer<UInt8>?, _ len: size_t, _ pcm: UnsafeMutablePointer<Float>?,
    _ max_samples: size_t
) -> Int32 {
    guard let decoder, let frame, let pcm else {
        return invalidArgument("deskaudio_decoder_decode: decoder, frame or pcm is NULL")
    }
    guard max_samples <= 1 << 24 else { return invalidArgument("max_samples \(max_samples) is absurd") }
    let receiver = receiver(of: decoder)
    let channels = receiver.output == .stereo ? 2 : Int(DESKAUDIO_DECODER_MAX_CHANNELS)
    return valueOrStatus { () throws(DeskAudioError) in
        Int32(
            try receiver.receive(
                UnsafeRawBufferPointer(start: frame, count: len),
                into: UnsafeMutableBufferPointer(start: pcm, count: max_samples * channels)))
    }
}

/// Copies a decoder's counts into `stats`. DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT
/// for NULL pointers.
/// - Parameters:
///   - decoder: the decoder (not NULL).
///   - stats: where the counts go (not NULL).
///   - stats_size: `sizeof(deskaudio_decoder_stats)` (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (NULL, or a size of 0).
@_cdecl("deskaudio_decoder_get_stats")
public func deskaudio_decoder_get_stats(
    _ decoder: deskaudio_decoder?, _ stats: UnsafeMutablePointer<deskaudio_decoder_stats>?, _ stats_size: size_t
) -> Int32 {
    guard let decoder else { return invalidArgument("decoder is NULL") }
    return copyOut(to: stats, size: stats_size, what: "stats") {
        let counters = receiver(of: decoder).counters
        return deskaudio_decoder_stats(
            frames_decoded: counters.framesDecoded, frames_lost: counters.framesLost,
            frames_concealed: counters.framesConcealed, frames_late: counters.framesLate, gaps: counters.gaps)
    }
}

/// The FrameReceiver behind a decoder handle (retained by deskaudio_decoder_create()).
private func receiver(of decoder: deskaudio_decoder) -> FrameReceiver { Handle.object(decoder) }
