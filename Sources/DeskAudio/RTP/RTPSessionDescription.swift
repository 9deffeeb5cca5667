import Glibc

/// The SDP (RFC 4566) of one RTP stream of Opus: the session lines a receiver such as
/// ffmpeg or GStreamer reads, and the media section a WebRTC offer or an SFU takes.
///
/// - Mono and stereo: `opus/48000/2` (RFC 7587 declares every Opus stream as two channels),
///   with `stereo` and `sprop-stereo` saying which it is, and `minptime` and `ptime` the
///   frame length.
/// - 5.1 and 7.1: `multiopus/48000/N` as Chromium's WebRTC accepts it, with `num_streams`,
///   `coupled_streams` and `channel_mapping`. The mapping lists, for each channel in the
///   order WebRTC and the audio servers use (FL FR FC LFE RL RR, then SL SR), the decoded
///   stream channel it takes: the frame's own table (in Vorbis order) reordered.
struct RTPSessionDescription {
    let format: RTPStreamFormat
    let payloadType: UInt8
    let ssrc: UInt32
    let absCaptureTimeID: UInt8

    /// The whole description of the stream sent to `address` and `port`, CRLF line ends.
    func text(address: String, port: UInt16) throws(DeskAudioError) -> String {
        let family = try Self.addressFamily(address)
        let pt = payloadType
        var lines = [
            "v=0",
            "o=- \(ssrc) 1 IN \(family) \(address)",
            "s=DeskAudio",
            "c=IN \(family) \(address)",
            "t=0 0",
            "m=audio \(port) RTP/AVP \(pt)",
        ]
        let milliseconds = Self.milliseconds(ofSamples: format.frameSamples)
        if let mapping = format.mapping, let layout = ChannelLayout(channels: format.channels) {
            let table = layout.vorbisIndex.map { String(mapping.table[$0]) }.joined(separator: ",")
            lines.append("a=rtpmap:\(pt) multiopus/48000/\(format.channels)")
            lines.append(
                "a=fmtp:\(pt) channel_mapping=\(table);num_streams=\(mapping.streams);"
                    + "coupled_streams=\(mapping.coupledStreams);minptime=\(milliseconds)")
        } else {
            let stereo = format.channels == 2 ? 1 : 0
            lines.append("a=rtpmap:\(pt) opus/48000/2")
            lines.append("a=fmtp:\(pt) minptime=\(milliseconds);stereo=\(stereo);sprop-stereo=\(stereo)")
        }
        lines.append("a=ptime:\(milliseconds)")
        if absCaptureTimeID != 0 {
            lines.append("a=extmap:\(absCaptureTimeID) \(RTPPacketizer.absCaptureTimeURI)")
        }
        lines.append("a=ssrc:\(ssrc) cname:deskaudio")
        lines.append("a=sendonly")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// "IP4" or "IP6" for an address literal, "IP4" for a host name (letters, digits, '-'
    /// and '.'); anything else could break the description's lines and is refused.
    static func addressFamily(_ address: String) throws(DeskAudioError) -> String {
        var bytes = in6_addr()
        if inet_pton(AF_INET6, address, &bytes) == 1 { return "IP6" }
        if inet_pton(AF_INET, address, &bytes) == 1 { return "IP4" }
        let allowed = address.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) || byte == 0x2D || byte == 0x2E
        }
        guard !address.isEmpty, address.utf8.count <= 253, allowed else {
            throw .invalidArgument("SDP address '\(address)': an IPv4 or IPv6 address or a host name")
        }
        return "IP4"
    }

    /// A frame length in milliseconds as SDP writes it: "10", "2.5".
    static func milliseconds(ofSamples samples: Int) -> String {
        let tenths = samples * 10_000 / AudioFormat.sampleRate
        return tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
    }
}
