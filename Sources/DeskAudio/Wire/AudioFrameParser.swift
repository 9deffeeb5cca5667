/// Reads AudioFrame bytes back: the receiving side's first step.
public enum AudioFrameParser {
    /// Why bytes are not a valid AudioFrame. Each case has its own C error code.
    public enum ParseError: Error, Equatable, Sendable {
        /// Fewer bytes than the header, or than the header's payload length says.
        case truncated(have: Int, need: Int)
        /// More bytes than header plus payload, or a payload larger than an Opus packet can be.
        case oversized(have: Int, limit: Int)
        /// The first four bytes are not "DAFR".
        case wrongMagic
        /// A version this library does not read.
        case unknownVersion(UInt8)
        /// A header field with a value its version does not allow.
        case invalidField(String)

        /// What is wrong, for people.
        public var message: String {
            switch self {
            case .truncated(let have, let need): "AudioFrame truncated: \(have) bytes, \(need) needed"
            case .oversized(let have, let limit): "AudioFrame oversized: \(have) bytes, at most \(limit)"
            case .wrongMagic: "not an AudioFrame: the first bytes are not \"DAFR\""
            case .unknownVersion(let version): "AudioFrame version \(version) is not one this library reads (1, 2)"
            case .invalidField(let text): "AudioFrame field invalid: \(text)"
            }
        }
    }

    /// A parsed frame: its header and the Opus packet inside `bytes`.
    public struct Frame {
        /// The decoded header.
        public var header: AudioFrameHeader
        /// The Opus packet; points into the bytes that were parsed.
        public var payload: UnsafeRawBufferPointer
    }

    /// Parses one AudioFrame occupying all of `bytes`: version 1 (mono or stereo, one Opus
    /// stream) or version 2 (surround, Opus multistream).
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ParseError) -> Frame {
        typealias Offset = AudioFrameHeader.Offset
        guard bytes.count > Offset.version else {
            throw .truncated(have: bytes.count, need: AudioFrameHeader.byteCount)
        }
        let magic = AudioFrameHeader.magic
        guard bytes[Offset.magic] == magic.0, bytes[Offset.magic + 1] == magic.1,
            bytes[Offset.magic + 2] == magic.2, bytes[Offset.magic + 3] == magic.3
        else {
            throw .wrongMagic
        }
        let version = bytes[Offset.version]
        guard version == AudioFrameHeader.currentVersion || version == AudioFrameHeader.multistreamVersion else {
            throw .unknownVersion(version)
        }
        guard bytes.count >= AudioFrameHeader.byteCount else {
            throw .truncated(have: bytes.count, need: AudioFrameHeader.byteCount)
        }
        var header = AudioFrameHeader(
            flags: AudioFrameHeader.Flags(rawValue: bytes[Offset.flags]),
            channels: bytes[Offset.channels],
            codec: bytes[Offset.codec],
            sampleRate: load(at: Offset.sampleRate, from: bytes),
            sequence: load(at: Offset.sequence, from: bytes),
            sampleClock: load(at: Offset.sampleClock, from: bytes),
            captureTimeNs: load(at: Offset.captureTime, from: bytes),
            frameSamples: load(at: Offset.frameSamples, from: bytes),
            payloadLength: load(at: Offset.payloadLength, from: bytes))
        var packetLimit = OpusFrameEncoder.maxPacketBytes
        if version == AudioFrameHeader.multistreamVersion {
            // The channel count sizes the mapping table: check it before reading further.
            guard (1...8).contains(header.channels) else {
                throw .invalidField("channels \(header.channels) is not 1 to 8 (version 2)")
            }
            let headerBytes = AudioFrameHeader.byteCount + 2 + Int(header.channels)
            guard bytes.count >= headerBytes else { throw .truncated(have: bytes.count, need: headerBytes) }
            let mapping = OpusChannelMapping(
                family: 1, streams: bytes[Offset.streams], coupledStreams: bytes[Offset.coupledStreams],
                channels: Int(header.channels),
                table: UnsafeRawBufferPointer(rebasing: bytes[Offset.mappingTable..<headerBytes]))
            header.mapping = mapping
            let streams = max(1, Int(mapping.streams))  // none is refused below, with its reason
            packetLimit = streams * OpusFrameEncoder.maxPacketBytes + (streams - 1) * 2
        }
        let headerBytes = header.headerByteCount
        let payloadLength = Int(header.payloadLength)
        guard payloadLength <= packetLimit else {
            throw .oversized(have: payloadLength, limit: packetLimit)
        }
        let total = headerBytes + payloadLength
        guard bytes.count >= total else { throw .truncated(have: bytes.count, need: total) }
        guard bytes.count == total else { throw .oversized(have: bytes.count, limit: total) }
        if let mapping = header.mapping {
            guard header.codec == AudioFrameHeader.codecOpusMultistream else {
                throw .invalidField("codec \(header.codec) is not Opus multistream (2) in version 2")
            }
            if let problem = mapping.problem { throw .invalidField("channel mapping: \(problem)") }
        } else {
            guard header.codec == AudioFrameHeader.codecOpus else {
                throw .invalidField("codec \(header.codec) is not Opus (1)")
            }
            guard header.channels == 1 || header.channels == 2 else {
                throw .invalidField("channels \(header.channels) is not 1 or 2")
            }
        }
        guard header.sampleRate == 48_000 else {
            throw .invalidField("sample rate \(header.sampleRate) is not 48000")
        }
        guard [120, 240, 480, 960, 1920, 2880].contains(header.frameSamples) else {
            throw .invalidField("frame of \(header.frameSamples) samples is not an Opus frame size")
        }
        guard payloadLength > 0 else { throw .invalidField("payload is empty") }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[headerBytes..<total])
        return Frame(header: header, payload: payload)
    }

    @inline(__always)
    private static func load<T: FixedWidthInteger>(at offset: Int, from bytes: UnsafeRawBufferPointer) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
