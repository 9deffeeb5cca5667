import DeskAudio

/// The AudioFrame parser as it was before version 2 (surround) existed, kept unchanged (at
/// commit 9a6c6c3, but for `public` and these lines) as a fixture: what a host with an
/// older DeskAudio does with the bytes this one writes.
enum VersionOneParser {
    /// Why bytes are not a valid AudioFrame. Each case has its own C error code.
    enum ParseError: Error, Equatable, Sendable {
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
        var message: String {
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
    struct Frame {
        /// The decoded header.
        var header: AudioFrameHeader
        /// The Opus packet; points into the bytes that were parsed.
        var payload: UnsafeRawBufferPointer
    }

    /// Parses one AudioFrame occupying all of `bytes`.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws(ParseError) -> Frame {
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
        guard version == 1 else { throw .unknownVersion(version) }
        guard bytes.count >= AudioFrameHeader.byteCount else {
            throw .truncated(have: bytes.count, need: AudioFrameHeader.byteCount)
        }
        let header = AudioFrameHeader(
            flags: AudioFrameHeader.Flags(rawValue: bytes[Offset.flags]),
            channels: bytes[Offset.channels],
            codec: bytes[Offset.codec],
            sampleRate: load(at: Offset.sampleRate, from: bytes),
            sequence: load(at: Offset.sequence, from: bytes),
            sampleClock: load(at: Offset.sampleClock, from: bytes),
            captureTimeNs: load(at: Offset.captureTime, from: bytes),
            frameSamples: load(at: Offset.frameSamples, from: bytes),
            payloadLength: load(at: Offset.payloadLength, from: bytes))
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
