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
        /// A header field with a value version 1 does not allow.
        case invalidField(String)

        /// What is wrong, for people.
        public var message: String {
            switch self {
            case .truncated(let have, let need): "AudioFrame truncated: \(have) bytes, \(need) needed"
            case .oversized(let have, let limit): "AudioFrame oversized: \(have) bytes, at most \(limit)"
            case .wrongMagic: "not an AudioFrame: the first bytes are not \"DAFR\""
            case .unknownVersion(let version): "AudioFrame version \(version) is not one this library reads (1)"
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

    /// Parses one AudioFrame occupying all of `bytes`.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ParseError) -> Frame {
        guard bytes.count >= 5 else {
            throw .truncated(have: bytes.count, need: AudioFrameHeader.byteCount)
        }
        let magic = AudioFrameHeader.magic
        guard bytes[0] == magic.0, bytes[1] == magic.1, bytes[2] == magic.2, bytes[3] == magic.3 else {
            throw .wrongMagic
        }
        guard bytes[4] == AudioFrameHeader.currentVersion else { throw .unknownVersion(bytes[4]) }
        guard bytes.count >= AudioFrameHeader.byteCount else {
            throw .truncated(have: bytes.count, need: AudioFrameHeader.byteCount)
        }
        let header = AudioFrameHeader(
            flags: AudioFrameHeader.Flags(rawValue: bytes[AudioFrameHeader.flagsOffset]),
            channels: bytes[6],
            codec: bytes[7],
            sampleRate: load(at: 8, from: bytes),
            sequence: load(at: 12, from: bytes),
            sampleClock: load(at: 16, from: bytes),
            captureTimeNs: load(at: AudioFrameHeader.captureTimeOffset, from: bytes),
            frameSamples: load(at: 32, from: bytes),
            payloadLength: load(at: 34, from: bytes))
        let payloadLength = Int(header.payloadLength)
        guard payloadLength <= OpusFrameEncoder.maxPacketBytes else {
            throw .oversized(have: payloadLength, limit: OpusFrameEncoder.maxPacketBytes)
        }
        let total = AudioFrameHeader.byteCount + payloadLength
        guard bytes.count >= total else { throw .truncated(have: bytes.count, need: total) }
        guard bytes.count == total else { throw .oversized(have: bytes.count, limit: total) }
        guard header.codec == AudioFrameHeader.codecOpus else {
            throw .invalidField("codec \(header.codec) is not Opus (1)")
        }
        guard header.channels == 1 || header.channels == 2 else {
            throw .invalidField("channels \(header.channels) is not 1 or 2")
        }
        guard header.sampleRate == 48_000 else {
            throw .invalidField("sample rate \(header.sampleRate) is not 48000")
        }
        guard [120, 240, 480, 960, 1920, 2880].contains(header.frameSamples) else {
            throw .invalidField("frame of \(header.frameSamples) samples is not an Opus frame size")
        }
        guard payloadLength > 0 else { throw .invalidField("payload is empty") }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[AudioFrameHeader.byteCount..<total])
        return Frame(header: header, payload: payload)
    }

    @inline(__always)
    private static func load<T: FixedWidthInteger>(at offset: Int, from bytes: UnsafeRawBufferPointer) -> T {
        T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
