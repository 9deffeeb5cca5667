import DeskAudio
import Testing

@Suite struct AudioFrameTests {
    /// The worked example of docs/wire-format.md, byte for byte.
    static let documentedExample: [UInt8] = [
        0x44, 0x41, 0x46, 0x52,  // magic "DAFR"
        0x01,  // version 1
        0x03,  // flags: after gap | app
        0x02,  // channels 2
        0x01,  // codec 1 = Opus
        0x80, 0xBB, 0x00, 0x00,  // sample rate 48000
        0x07, 0x00, 0x00, 0x00,  // sequence 7
        0x00, 0x53, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00,  // sample clock 480000 (10 s)
        0x00, 0xCA, 0x9A, 0x3B, 0x00, 0x00, 0x00, 0x00,  // capture time 1000000000 ns
        0xE0, 0x01,  // frame samples 480
        0x03, 0x00,  // payload length 3
        0xF8, 0xFF, 0xFE,  // payload: the Opus packet
    ]

    static let exampleHeader = AudioFrameHeader(
        flags: [.afterGap, .app], sequence: 7, sampleClock: 480_000, captureTimeNs: 1_000_000_000,
        payloadLength: 3)

    static func parse(_ bytes: [UInt8]) throws(AudioFrameParser.ParseError) -> AudioFrameHeader {
        var result: Result<AudioFrameHeader, AudioFrameParser.ParseError>!
        bytes.withUnsafeBytes { raw in
            do throws(AudioFrameParser.ParseError) {
                result = .success(try AudioFrameParser.parse(raw).header)
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    @Test func writerProducesTheDocumentedBytes() {
        var bytes = [UInt8](repeating: 0xAA, count: AudioFrameHeader.byteCount)
        bytes.withUnsafeMutableBytes { AudioFrameWriter.write(Self.exampleHeader, into: $0) }
        #expect(bytes + [0xF8, 0xFF, 0xFE] == Self.documentedExample)
    }

    @Test func parserReadsTheDocumentedExample() throws {
        #expect(try Self.parse(Self.documentedExample) == Self.exampleHeader)
        let payload = Self.documentedExample.withUnsafeBytes { raw in
            Array(try! AudioFrameParser.parse(raw).payload)
        }
        #expect(payload == [0xF8, 0xFF, 0xFE])
    }

    @Test func truncatedInputIsRejected() {
        for length in [0, 3, 4, 5, 20, 35, 36, 38] {
            #expect(throws: AudioFrameParser.ParseError.self, "length \(length)") {
                try Self.parse(Array(Self.documentedExample.prefix(length)))
            }
            do {
                _ = try Self.parse(Array(Self.documentedExample.prefix(length)))
            } catch {
                guard case .truncated = error else {
                    Issue.record("length \(length): \(error), expected truncated")
                    continue
                }
            }
        }
    }

    @Test func trailingBytesAndHugePayloadLengthAreOversized() {
        #expect(throws: AudioFrameParser.ParseError.oversized(have: 40, limit: 39)) {
            try Self.parse(Self.documentedExample + [0])
        }
        var huge = Self.documentedExample
        huge[34] = 0xFF
        huge[35] = 0xFF
        #expect(throws: AudioFrameParser.ParseError.oversized(have: 65535, limit: 1275)) {
            try Self.parse(huge)
        }
    }

    @Test func wrongMagicAndUnknownVersionAreDistinct() {
        var magic = Self.documentedExample
        magic[0] = 0x45
        #expect(throws: AudioFrameParser.ParseError.wrongMagic) { try Self.parse(magic) }
        var version = Self.documentedExample
        version[4] = 3
        #expect(throws: AudioFrameParser.ParseError.unknownVersion(3)) { try Self.parse(version) }
        // A short buffer with a bad magic is wrong magic, not truncated.
        #expect(throws: AudioFrameParser.ParseError.wrongMagic) { try Self.parse([0, 0, 0, 0, 1]) }
    }

    @Test func fieldsVersion1DoesNotAllowAreRejected() {
        for (offset, value) in [(6, UInt8(3)), (7, UInt8(2)), (8, UInt8(0x44)), (32, UInt8(0x11))] {
            var bytes = Self.documentedExample
            bytes[offset] = value
            #expect(throws: AudioFrameParser.ParseError.self, "byte \(offset) = \(value)") {
                try Self.parse(bytes)
            }
        }
    }
}
