/// The header of AudioFrame bytes (docs/wire-format.md). Version 1: 36 bytes, one Opus
/// stream (mono or stereo). Version 2: the same 36 bytes, then the channel mapping of an
/// Opus multistream packet (surround). All fields little-endian; the Opus packet follows
/// the header directly.
public struct AudioFrameHeader: Equatable, Sendable {
    /// "DAFR": the first four bytes of every AudioFrame.
    public static let magic: (UInt8, UInt8, UInt8, UInt8) = (0x44, 0x41, 0x46, 0x52)
    /// The layout version of mono and stereo frames.
    public static let currentVersion: UInt8 = 1
    /// The layout version of surround frames (readers of version 1 reject them).
    public static let multistreamVersion: UInt8 = 2
    /// Bytes in a version 1 header: the fixed part every version starts with.
    public static let byteCount = 36
    /// Bytes in the largest header (version 2, 8 channels).
    public static let maxByteCount = byteCount + 2 + 8
    /// Codec identifier for Opus, one stream (version 1).
    public static let codecOpus: UInt8 = 1
    /// Codec identifier for Opus multistream, channel mapping family 1 (version 2).
    public static let codecOpusMultistream: UInt8 = 2

    /// Where each field starts in the header, in bytes (docs/wire-format.md): the one table
    /// the writer, the parser, the frame queue and the delivery thread all read.
    public enum Offset {
        /// "DAFR", 4 bytes.
        public static let magic = 0
        /// Layout version, u8.
        public static let version = 4
        /// Flags, u8.
        public static let flags = 5
        /// Channels, u8.
        public static let channels = 6
        /// Codec, u8.
        public static let codec = 7
        /// Sample rate in Hz, u32.
        public static let sampleRate = 8
        /// Sequence number, u32.
        public static let sequence = 12
        /// 48 kHz sample clock of the first sample, u64.
        public static let sampleClock = 16
        /// Capture time of the first sample, CLOCK_MONOTONIC ns, u64.
        public static let captureTime = 24
        /// Samples per channel, u16.
        public static let frameSamples = 32
        /// Opus packet bytes, u16.
        public static let payloadLength = 34
        /// Version 2: Opus streams in the packet, u8.
        public static let streams = 36
        /// Version 2: coupled streams among them, u8.
        public static let coupledStreams = 37
        /// Version 2: the channel mapping table, one u8 per channel.
        public static let mappingTable = 38
    }

    /// Bit flags carried in the header.
    public struct Flags: OptionSet, Sendable {
        public let rawValue: UInt8
        /// Creates flags from their byte.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The first frame sent after the zero gate held frames back (no loss before it).
        public static let afterGap = Flags(rawValue: 1 << 0)
        /// App audio (what the machine plays) is in this frame.
        public static let app = Flags(rawValue: 1 << 1)
        /// Microphone audio is in this frame.
        public static let mic = Flags(rawValue: 1 << 2)
        /// PCM the host delivered (deskaudio_push_pcm) is in the frame.
        public static let host = Flags(rawValue: 1 << 3)
        /// Frames before this one were dropped because the host's frame callback fell
        /// more than 0.5 s behind: the sequence has a hole, and a decoder conceals it.
        public static let afterLoss = Flags(rawValue: 1 << 4)
        /// This frame's capture time does not follow from the last sent frame's (its time
        /// plus the samples between them): the server's clock stepped against the samples
        /// (a quantum skipped or changed, a stall, a restart) or another source's clock took
        /// over, and the timeline starts again here. A host pairing audio with video
        /// re-anchors at this frame.
        public static let timeStep = Flags(rawValue: 1 << 5)
    }

    /// See `Flags`.
    public var flags: Flags
    /// Channels of the encoded audio (2).
    public var channels: UInt8
    /// Codec of the payload (1 = Opus).
    public var codec: UInt8
    /// Sample rate of the encoded audio in Hz (48 000).
    public var sampleRate: UInt32
    /// Counts frames *sent*, starting at 0 and wrapping at 2³²: a hole means loss.
    public var sequence: UInt32
    /// 48 kHz sample clock of the frame's first sample; it runs on through gated silence.
    public var sampleClock: UInt64
    /// CLOCK_MONOTONIC time, in nanoseconds, at which the frame's first sample was captured.
    public var captureTimeNs: UInt64
    /// Samples per channel the payload decodes to (480 for 10 ms).
    public var frameSamples: UInt16
    /// Bytes of Opus packet following the header.
    public var payloadLength: UInt16
    /// Version 2 (surround): how the packet's streams make up the channels; nil in version 1.
    public var mapping: OpusChannelMapping?

    /// The layout version these fields are written in: 2 with a mapping, else 1.
    public var version: UInt8 { mapping == nil ? AudioFrameHeader.currentVersion : AudioFrameHeader.multistreamVersion }
    /// Bytes of this header: 36, or 38 plus one per channel in version 2.
    public var headerByteCount: Int {
        mapping.map { AudioFrameHeader.byteCount + 2 + Int($0.channels) } ?? AudioFrameHeader.byteCount
    }

    /// A header with every field given.
    public init(
        flags: Flags, channels: UInt8 = UInt8(AudioFormat.channels), codec: UInt8 = codecOpus,
        sampleRate: UInt32 = UInt32(AudioFormat.sampleRate), sequence: UInt32, sampleClock: UInt64,
        captureTimeNs: UInt64, frameSamples: UInt16 = UInt16(AudioFormat.frameSamples),
        payloadLength: UInt16, mapping: OpusChannelMapping? = nil
    ) {
        self.flags = flags
        self.channels = channels
        self.codec = codec
        self.sampleRate = sampleRate
        self.sequence = sequence
        self.sampleClock = sampleClock
        self.captureTimeNs = captureTimeNs
        self.frameSamples = frameSamples
        self.payloadLength = payloadLength
        self.mapping = mapping
    }
}
