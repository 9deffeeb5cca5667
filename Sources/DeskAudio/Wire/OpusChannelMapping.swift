/// How an Opus packet's streams make up channels (RFC 7845 §5.1.1): the mapping family, the
/// number of streams and of coupled (stereo) streams among them, and for each output
/// channel the decoded stream channel it takes (255: silence). Fixed size: no allocation.
public struct OpusChannelMapping: Equatable, Sendable {
    /// 0: one stream, mono or stereo; 1: Vorbis channel order, 1–8 channels (surround).
    public var family: UInt8
    /// Opus streams in each packet.
    public var streams: UInt8
    /// How many of the streams are coupled (two channels each); they come first.
    public var coupledStreams: UInt8
    /// Channels the mapping makes.
    public var channels: UInt8
    /// The channel mapping table, `channels` entries in Vorbis order (the rest 0).
    public var table: SIMD8<UInt8>

    /// A mapping with every field given; `table` holds at least `channels` entries.
    public init(family: UInt8, streams: UInt8, coupledStreams: UInt8, table: [UInt8], channels: Int) {
        self.family = family
        self.streams = streams
        self.coupledStreams = coupledStreams
        self.channels = UInt8(channels)
        var entries = SIMD8<UInt8>()
        for index in 0..<min(channels, 8) { entries[index] = table[index] }
        self.table = entries
    }

    /// A mapping read from a frame: `channels` table entries from `table`.
    public init(
        family: UInt8, streams: UInt8, coupledStreams: UInt8, channels: Int, table: UnsafeRawBufferPointer
    ) {
        self.family = family
        self.streams = streams
        self.coupledStreams = coupledStreams
        self.channels = UInt8(channels)
        var entries = SIMD8<UInt8>()
        for index in 0..<min(channels, 8, table.count) { entries[index] = table[index] }
        self.table = entries
    }

    /// Why the mapping cannot be decoded, or nil when it can (RFC 7845's rules: at least one
    /// stream, no more coupled streams than streams, streams + coupled ≤ 255, each entry
    /// naming a decoded channel or 255).
    public var problem: String? {
        guard streams >= 1 else { return "no Opus stream" }
        guard coupledStreams <= streams else { return "\(coupledStreams) coupled streams of \(streams)" }
        let decoded = Int(streams) + Int(coupledStreams)
        guard decoded <= 255 else { return "\(decoded) decoded channels" }
        for index in 0..<Int(channels) where table[index] != 255 && Int(table[index]) >= decoded {
            return "channel \(index) maps to stream channel \(table[index]) of \(decoded)"
        }
        return nil
    }
}
