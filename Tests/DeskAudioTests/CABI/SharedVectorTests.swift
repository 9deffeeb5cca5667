import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import Testing

/// Tests/Vectors/audio-frames.json through the C API: the same vectors the browser player's
/// tests read (Tests/Web/audio-frame.test.mjs), so both receivers read bytes and count loss
/// and gaps alike.
@Suite struct SharedVectorTests {
    static var vectors: [String: Any] {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Vectors/audio-frames.json")
        let data = try! Data(contentsOf: url)
        return try! JSONSerialization.jsonObject(with: data) as! [String: Any]
    }

    static var codes: [String: deskaudio_status] { [
        "truncated": .DESKAUDIO_ERROR_FRAME_TRUNCATED, "oversized": .DESKAUDIO_ERROR_FRAME_OVERSIZED,
        "magic": .DESKAUDIO_ERROR_FRAME_MAGIC, "version": .DESKAUDIO_ERROR_FRAME_VERSION,
        "field": .DESKAUDIO_ERROR_FRAME_FIELD,
    ] }

    static func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    @Test func everyFrameVectorParsesAsItSays() {
        let frames = Self.vectors["frames"] as! [[String: Any]]
        #expect(frames.count >= 30)
        for vector in frames {
            let name = vector["name"] as! String
            let bytes = Self.bytes(vector["hex"] as! String)
            var info = deskaudio_frame_info()
            let status = bytes.withUnsafeBufferPointer { deskaudio_parse_frame($0.baseAddress ?? UnsafePointer(bitPattern: 1), $0.count, &info, MemoryLayout<deskaudio_frame_info>.size) }
            if let error = vector["error"] as? String {
                #expect(status == Self.codes[error]!.rawValue, "\(name): \(status), expected \(error)")
                continue
            }
            #expect(status == deskaudio_status.DESKAUDIO_OK.rawValue, "\(name): \(String(cString: deskaudio_last_error()!))")
            let fields = vector["fields"] as! [String: Any]
            for (field, value) in fields {
                let matches: Bool
                switch field {
                case "version": matches = Int(info.version) == value as! Int
                case "flags": matches = Int(info.flags) == value as! Int
                case "afterGap": matches = (info.flags & 1 != 0) == value as! Bool
                case "app": matches = (info.flags & 2 != 0) == value as! Bool
                case "mic": matches = (info.flags & 4 != 0) == value as! Bool
                case "afterLoss": matches = (info.flags & 16 != 0) == value as! Bool
                case "timeStep": matches = (info.flags & 32 != 0) == value as! Bool
                case "channels": matches = Int(info.channels) == value as! Int
                case "sequence": matches = Int(info.sequence) == value as! Int
                case "sampleClock": matches = String(info.sample_clock) == value as! String
                case "captureTimeNs": matches = String(info.capture_time_ns) == value as! String
                case "frameSamples": matches = Int(info.frame_samples) == value as! Int
                case "payloadLength": matches = Int(info.payload_length) == value as! Int
                case "payloadHex":
                    let payload = Array(UnsafeBufferPointer(start: info.payload, count: Int(info.payload_length)))
                    matches = payload == Self.bytes(value as! String)
                case "streams", "coupledStreams", "table":
                    // The C info has no mapping fields: the Swift parser's are checked instead.
                    matches = bytes.withUnsafeBytes { raw in
                        guard let mapping = try? AudioFrameParser.parse(raw).header.mapping else { return false }
                        switch field {
                        case "streams": return Int(mapping.streams) == value as! Int
                        case "coupledStreams": return Int(mapping.coupledStreams) == value as! Int
                        default: return (0..<Int(mapping.channels)).map { Int(mapping.table[$0]) } == value as! [Int]
                        }
                    }
                default:
                    Issue.record("\(name): unknown field \(field) in the vectors")
                    matches = true
                }
                #expect(matches, "\(name): \(field)")
            }
        }
    }

    /// The writer's rules are the parser's: every frame vector that parses is written back to
    /// its bytes (as web/audio-frame.js's writer is, Tests/Web/audio-frame.test.mjs).
    @Test func everyValidFrameVectorIsWrittenBackToItsBytes() throws {
        var written = 0
        for vector in Self.vectors["frames"] as! [[String: Any]] where vector["error"] == nil {
            let bytes = Self.bytes(vector["hex"] as! String)
            let again = try bytes.withUnsafeBytes { raw in
                let frame = try AudioFrameParser.parse(raw)
                var out = [UInt8](repeating: 0, count: raw.count)
                out.withUnsafeMutableBytes { buffer in
                    AudioFrameWriter.write(frame.header, into: buffer)
                    UnsafeMutableRawBufferPointer(rebasing: buffer[frame.header.headerByteCount...]).copyMemory(from: frame.payload)
                }
                return out
            }
            #expect(again == bytes, "\(vector["name"] as! String)")
            written += 1
        }
        #expect(written >= 10)
    }

    @Test func everyStreamVectorCountsLossAndGapsAsItSays() throws {
        let template = try ReceivingThroughCABITests.encodedTone(frames: 1)[0]
        for vector in Self.vectors["streams"] as! [[String: Any]] {
            let name = vector["name"] as! String
            let decoder = deskaudio_decoder_create()
            defer { deskaudio_decoder_destroy(decoder) }
            var pcm = [Float](repeating: 0, count: Int(DESKAUDIO_DECODER_MAX_SAMPLES) * 2)
            for (index, arrival) in (vector["arrivals"] as! [[Any]]).enumerated() {
                var frame = template
                withUnsafeBytes(of: UInt32(arrival[0] as! Int).littleEndian) { frame.replaceSubrange(12..<16, with: $0) }
                withUnsafeBytes(of: UInt64(index * 480).littleEndian) { frame.replaceSubrange(16..<24, with: $0) }
                frame[5] = (frame[5] & ~1) | ((arrival[1] as! Bool) ? 1 : 0)
                let decoded = frame.withUnsafeBufferPointer { bytes in
                    pcm.withUnsafeMutableBufferPointer {
                        deskaudio_decoder_decode(decoder, bytes.baseAddress, bytes.count, $0.baseAddress, Int(DESKAUDIO_DECODER_MAX_SAMPLES))
                    }
                }
                #expect(decoded > 0, "\(name): frame \(index) decoded")
            }
            var stats = deskaudio_decoder_stats()
            deskaudio_decoder_get_stats(decoder, &stats, MemoryLayout<deskaudio_decoder_stats>.size)
            #expect(Int(stats.frames_lost) == vector["lost"] as! Int, "\(name): lost")
            #expect(Int(stats.gaps) == vector["gaps"] as! Int, "\(name): gaps")
        }
    }
}
