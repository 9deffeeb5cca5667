/// What one RTP stream of Opus carries, as its SDP declares it: a single Opus stream (mono or
/// stereo, RFC 7587's `opus/48000/2`) or a multistream surround packet (5.1, 7.1: the
/// `multiopus` form WebRTC stacks accept), and the frame length for `ptime`.
public struct RTPStreamFormat: Equatable, Sendable {
    /// Channels of the audio: 1 or 2 (one Opus stream), 6 or 8 (multistream).
    public var channels: Int
    /// The multistream mapping of a surround stream (as its frames carry it); nil for 1 or 2.
    public var mapping: OpusChannelMapping?
    /// Samples per channel of each packet at 48 kHz (120, 240, 480, 960): `ptime`.
    public var frameSamples: Int

    /// Stereo, 10 ms: what the library sends unless the host chose otherwise.
    public static let standard = RTPStreamFormat(channels: 2, mapping: nil, frameSamples: AudioFormat.frameSamples)

    /// A format with every field given.
    public init(channels: Int, mapping: OpusChannelMapping?, frameSamples: Int) {
        self.channels = channels
        self.mapping = mapping
        self.frameSamples = frameSamples
    }

    /// The format a host declares before any frame: `channels` (1, 2, 6, 8) coded as the
    /// library's encoder codes them by default, `frameSamples` per packet.
    public init(declaredChannels channels: Int, frameSamples: Int) throws(DeskAudioError) {
        guard let layout = ChannelLayout(channels: channels) else {
            throw .invalidArgument("RTP stream channels \(channels): 1, 2, 6 or 8")
        }
        guard FrameDuration(rawValue: frameSamples) != nil else {
            throw .invalidArgument("RTP frame length \(frameSamples) samples: 120, 240, 480 or 960")
        }
        self.channels = channels
        self.frameSamples = frameSamples
        // The mapping is libopus's, as the library's encoder gets it (made once, not per packet).
        mapping = layout.mappingFamily == 0 ? nil : try OpusFrameEncoder(layout: layout).mapping
    }

    /// The format of the stream a frame with `header` belongs to.
    public init(of header: AudioFrameHeader) {
        self.init(channels: Int(header.channels), mapping: header.mapping, frameSamples: Int(header.frameSamples))
    }

    /// Whether a frame with `header` fits this stream: mono and stereo frames go in a stereo
    /// or mono stream (RFC 7587 lets each packet choose); a surround frame only in a stream of
    /// its own channels and mapping. Frame lengths may change at any frame.
    public func accepts(_ header: AudioFrameHeader) -> Bool {
        switch (mapping, header.mapping) {
        case (nil, nil): true
        case (let ours?, let theirs?): ours == theirs
        default: false
        }
    }

    /// A short name for messages: "stereo", "mono", "5.1", "7.1", or "N channels".
    public var name: String {
        switch (channels, mapping) {
        case (1, nil): "mono"
        case (2, nil): "stereo"
        case (6, _?): "5.1"
        case (8, _?): "7.1"
        default: "\(channels) channels"
        }
    }
}
