/// The channels a capture carries and how Opus codes them. Interleaved PCM, in the library
/// and at its edges, is in the order audio servers (PipeWire, PulseAudio, WAVE) use:
/// FL FR FC LFE RL RR for 5.1, then SL SR for 7.1. Mono and stereo are one Opus stream
/// (mapping family 0); 5.1 and 7.1 are libopus's multistream surround coding with channel
/// mapping family 1 (RFC 7845 §5.1.1), whose own channel order is Vorbis's.
public enum ChannelLayout: Int, CaseIterable, Sendable {
    /// One channel.
    case mono = 1
    /// FL FR.
    case stereo = 2
    /// FL FR FC LFE RL RR.
    case surround51 = 6
    /// FL FR FC LFE RL RR SL SR.
    case surround71 = 8

    /// The layout of `channels` channels (1, 2, 6 or 8); nil for others.
    public init?(channels: Int) { self.init(rawValue: channels) }

    /// Interleaved channels.
    public var channels: Int { rawValue }

    /// Opus channel mapping family (RFC 7845): 0 for mono and stereo, 1 for surround.
    public var mappingFamily: UInt8 { channels <= 2 ? 0 : 1 }

    /// Opus streams in a packet, and how many of them are coupled (stereo) streams; for
    /// family 1 as RFC 7845 §5.1.1.2 gives them (5.1: 4 streams, 2 coupled; 7.1: 5, 3).
    public var streams: (count: Int, coupled: Int) {
        switch self {
        case .mono: (1, 0)
        case .stereo: (1, 1)
        case .surround51: (4, 2)
        case .surround71: (5, 3)
        }
    }

    /// Names of the channels in the library's (the servers') order.
    public var positions: [String] {
        Array(["FL", "FR", "FC", "LFE", "RL", "RR", "SL", "SR"].prefix(channels))
            .map { channels == 1 ? "MONO" : $0 }
    }

    /// For each channel in the library's order, its index in Vorbis order (RFC 7845 family 1:
    /// 5.1 is FL FC FR RL RR LFE; 7.1 is FL FC FR SL SR RL RR LFE), the order libopus's
    /// surround encoder reads and its decoder writes.
    public var vorbisIndex: [Int] {
        switch self {
        case .mono: [0]
        case .stereo: [0, 1]
        case .surround51: [0, 2, 1, 5, 3, 4]
        case .surround71: [0, 2, 1, 7, 5, 6, 3, 4]
        }
    }
}
