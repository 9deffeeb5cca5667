import DeskAudio
import Glibc

//# 8. RTP: AudioFrames as standard RTP packets (RFC 3550, RFC 7587) and the SDP that describes them

/// Turns one stream of AudioFrames into RTP packets for a WebRTC, RTSP or plain RTP stack
/// (docs/rtp.md). Use it from one thread at a time (the frame callback's, typically).
public typealias deskaudio_rtp_packetizer = OpaquePointer

/// Bytes that always hold one packet from deskaudio_rtp_packetize(): the RTP header, the
/// abs-capture-time extension and a 7.1 frame's largest Opus multistream packet.
public let DESKAUDIO_RTP_MAX_PACKET: Int32 = 6411

/// Bytes that always hold deskaudio_rtp_sdp()'s text and its terminating NUL.
public let DESKAUDIO_RTP_MAX_SDP: Int32 = 1024

/// Creates a packetizer for one RTP stream: `payload_type` a dynamic one (96-127, or 35-63),
/// `ssrc` the stream's identifier (0: one at random). The first sequence number and
/// timestamp are random. The stream is stereo Opus with 10 ms packets unless
/// deskaudio_rtp_packetizer_set_format() declares otherwise or the first frame is surround.
/// NULL on failure (deskaudio_last_error() says why). Free it with
/// deskaudio_rtp_packetizer_destroy().
/// - Parameters:
///   - payload_type: the RTP payload type the receiver expects (its SDP's).
///   - ssrc: the synchronization source identifier, or 0 for a random one.
/// - Returns: a new packetizer, or NULL (DESKAUDIO_ERROR_INVALID_ARGUMENT for a payload type out of range).
// C: warn_unused_result
@_cdecl("deskaudio_rtp_packetizer_create")
public func deskaudio_rtp_packetizer_create(_ payload_type: UInt8, _ ssrc: UInt32) -> deskaudio_rtp_packetizer? {
    var created: RTPPacketizer?
    _ = status { () throws(DeskAudioError) in created = try RTPPacketizer(payloadType: payload_type, ssrc: ssrc) }
    return created.map(Handle.retained)
}

/// Declares the stream's channels (1, 2, 6 or 8) and samples per packet (120, 240, 480 or
/// 960 at 48 kHz) before the first packet, so that deskaudio_rtp_sdp() can describe a stream
/// no frame has reached yet (a 5.1 or 7.1 one, or frames other than 10 ms). Without it the
/// first frame sets them. Frames of other channels are refused afterwards.
/// - Parameters:
///   - packetizer: the packetizer (not NULL).
///   - channels: 1, 2, 6 or 8.
///   - frame_samples: samples per channel in each packet: 120, 240, 480 or 960.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (a value out of range, or a packet already made).
@_cdecl("deskaudio_rtp_packetizer_set_format")
public func deskaudio_rtp_packetizer_set_format(
    _ packetizer: deskaudio_rtp_packetizer?, _ channels: Int32, _ frame_samples: Int32
) -> Int32 {
    guard let packetizer else { return invalidArgument("deskaudio_rtp_packetizer_set_format: packetizer is NULL") }
    return status { () throws(DeskAudioError) in
        try rtpPacketizer(packetizer).declare(
            RTPStreamFormat(declaredChannels: Int(channels), frameSamples: Int(frame_samples)))
    }
}

/// Puts the abs-capture-time header extension (the frame's capture time as an NTP timestamp,
/// RFC 8285 one-byte form) on every packet from now on, under `extension_id` (1-14, as the
/// SDP's a=extmap names it); 0 takes it off.
/// - Parameters:
///   - packetizer: the packetizer (not NULL).
///   - extension_id: 1 to 14, or 0 for no extension.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_rtp_packetizer_set_abs_capture_time")
public func deskaudio_rtp_packetizer_set_abs_capture_time(
    _ packetizer: deskaudio_rtp_packetizer?, _ extension_id: Int32
) -> Int32 {
    guard let packetizer else {
        return invalidArgument("deskaudio_rtp_packetizer_set_abs_capture_time: packetizer is NULL")
    }
    return status { () throws(DeskAudioError) in try rtpPacketizer(packetizer).setAbsCaptureTime(id: Int(extension_id)) }
}

/// Writes the RTP packet for one AudioFrame into `out`: the header (timestamp from the
/// frame's sample clock, so a gate gap advances it by the gap and sets the marker bit on the
/// first packet after it; sequence numbers with no hole for the gate), then the frame's Opus
/// packet byte for byte. Returns the packet's length. On failure nothing is written and the
/// stream goes on as if the frame had not been given.
/// - Parameters:
///   - packetizer: the packetizer (not NULL).
///   - frame: the AudioFrame (not NULL); the caller's.
///   - frame_len: bytes at `frame`.
///   - out: where the packet goes (not NULL).
///   - out_cap: bytes at `out`; DESKAUDIO_RTP_MAX_PACKET always suffices.
/// - Returns: the packet's length in bytes, or DESKAUDIO_ERROR_BUFFER_TOO_SMALL, DESKAUDIO_ERROR_RTP_FORMAT (a frame of other channels than the stream's), a DESKAUDIO_ERROR_FRAME_* code, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
// C: warn_unused_result
@_cdecl("deskaudio_rtp_packetize")
public func deskaudio_rtp_packetize(
    _ packetizer: deskaudio_rtp_packetizer?, _ frame: UnsafePointer<UInt8>?, _ frame_len: size_t,
    _ out: UnsafeMutablePointer<UInt8>?, _ out_cap: size_t
) -> Int32 {
    guard let packetizer, let frame, let out else {
        return invalidArgument("deskaudio_rtp_packetize: packetizer, frame or out is NULL")
    }
    let input = UnsafeRawBufferPointer(start: frame, count: frame_len)
    return writing(packetizer, out, out_cap) { rtp, buffer throws(DeskAudioError) in try rtp.packetize(input, into: buffer) }
}

/// Writes the SDP of the stream sent to `address` (IPv4, IPv6 or a host name) and `port`
/// into `out`, NUL-terminated: what ffmpeg, GStreamer or an SFU's RTP input reads, and whose
/// media section (from "m=") a WebRTC offer takes. Stereo and mono as opus/48000/2 with
/// stereo and sprop-stereo; 5.1 and 7.1 as multiopus with num_streams, coupled_streams and
/// channel_mapping; ptime and minptime the frame length; a=extmap when abs-capture-time is on.
/// Returns the text's length, without the NUL.
/// - Parameters:
///   - packetizer: the packetizer (not NULL).
///   - address: where the receiver listens (not NULL).
///   - port: the receiver's UDP port.
///   - out: where the text goes (not NULL).
///   - out_cap: bytes at `out`; DESKAUDIO_RTP_MAX_SDP always suffices.
/// - Returns: the length written (without the NUL), or DESKAUDIO_ERROR_BUFFER_TOO_SMALL or DESKAUDIO_ERROR_INVALID_ARGUMENT.
// C: warn_unused_result
@_cdecl("deskaudio_rtp_sdp")
public func deskaudio_rtp_sdp(
    _ packetizer: deskaudio_rtp_packetizer?, _ address: UnsafePointer<CChar>?, _ port: UInt16,
    _ out: UnsafeMutablePointer<CChar>?, _ out_cap: size_t
) -> Int32 {
    guard let packetizer, let out else { return invalidArgument("deskaudio_rtp_sdp: packetizer or out is NULL") }
    guard let address else { return invalidArgument("deskaudio_rtp_sdp: address is NULL (the receiver's)") }
    let receiver = String(cString: address)
    return writing(packetizer, out, out_cap) { rtp, buffer throws(DeskAudioError) in
        try rtp.writeSessionDescription(address: receiver, port: port, into: buffer)
    }
}

/// Frees a packetizer; NULL is ignored.
/// - Parameters:
///   - packetizer: the packetizer to free; NULL is ignored.
@_cdecl("deskaudio_rtp_packetizer_destroy")
public func deskaudio_rtp_packetizer_destroy(_ packetizer: deskaudio_rtp_packetizer?) {
    guard let packetizer else { return }
    Handle.release(packetizer, as: RTPPacketizer.self)
}

/// The RTPPacketizer behind a handle (retained by deskaudio_rtp_packetizer_create()).
private func rtpPacketizer(_ handle: deskaudio_rtp_packetizer) -> RTPPacketizer { Handle.object(handle) }

/// Runs `write` with the packetizer behind `handle` and the caller's `capacity` bytes at
/// `out`: the byte count it wrote, or the negative status of its error.
private func writing<Pointee>(
    _ handle: deskaudio_rtp_packetizer, _ out: UnsafeMutablePointer<Pointee>, _ capacity: size_t,
    _ write: (RTPPacketizer, UnsafeMutableRawBufferPointer) throws(DeskAudioError) -> Int
) -> Int32 {
    valueOrStatus { () throws(DeskAudioError) in
        Int32(try write(rtpPacketizer(handle), UnsafeMutableRawBufferPointer(start: out, count: capacity)))
    }
}
