import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

/// The receiving side through the C ABI: deskaudio_parse_frame and the decoder handle, on
/// frames the real pipeline encoded. No audio server needed.
@Suite struct ReceivingThroughCABITests {
    static func encodedTone(frames count: Int) throws -> [[UInt8]] {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        var frames: [[UInt8]] = []
        SignalAnalysis.sine(frequency: 440, amplitude: 0.5, frames: count * 480).withUnsafeBufferPointer { chunk in
            pipeline.process(chunk, sources: [.app, .mic], endTimeNs: 5_000_000) { frames.append(Array($0)) }
        }
        return frames
    }

    @Test func parseFillsEveryFieldAndPointsAtThePayload() throws {
        let frames = try Self.encodedTone(frames: 3)
        var info = deskaudio_frame_info()
        let status = frames[2].withUnsafeBufferPointer { deskaudio_parse_frame($0.baseAddress, $0.count, &info, MemoryLayout<deskaudio_frame_info>.size) }
        #expect(status == deskaudio_status.DESKAUDIO_OK.rawValue)
        #expect(info.sequence == 2 && info.sample_clock == 960 && info.frame_samples == 480)
        #expect(info.sample_rate == 48_000 && info.channels == 2 && info.codec == 1 && info.version == 1)
        #expect(info.flags == UInt8(deskaudio_frame_flag.DESKAUDIO_FRAME_APP.rawValue | deskaudio_frame_flag.DESKAUDIO_FRAME_MIC.rawValue))
        #expect(Int(info.payload_length) == frames[2].count - 36)
        frames[2].withUnsafeBufferPointer { bytes in
            #expect(info.payload == bytes.baseAddress! + 36, "the payload pointer is into the parsed bytes")
        }
    }

    @Test func eachKindOfBadFrameHasItsOwnCodeAndLeavesInfoAlone() throws {
        let good = try Self.encodedTone(frames: 1)[0]
        var wrongMagic = good
        wrongMagic[0] = 0
        var wrongVersion = good
        wrongVersion[4] = 9
        var wrongCodec = good
        wrongCodec[7] = 5
        let cases: [([UInt8], deskaudio_status)] = [
            (Array(good[0..<3]), .DESKAUDIO_ERROR_FRAME_TRUNCATED),
            (Array(good.dropLast()), .DESKAUDIO_ERROR_FRAME_TRUNCATED),
            (good + [0], .DESKAUDIO_ERROR_FRAME_OVERSIZED),
            (wrongMagic, .DESKAUDIO_ERROR_FRAME_MAGIC),
            (wrongVersion, .DESKAUDIO_ERROR_FRAME_VERSION),
            (wrongCodec, .DESKAUDIO_ERROR_FRAME_FIELD),
        ]
        for (bytes, expected) in cases {
            var info = deskaudio_frame_info()
            info.sequence = 77
            let status = bytes.withUnsafeBufferPointer { deskaudio_parse_frame($0.baseAddress, $0.count, &info, MemoryLayout<deskaudio_frame_info>.size) }
            #expect(status == expected.rawValue, "\(expected): \(String(cString: deskaudio_last_error()!))")
            #expect(info.sequence == 77, "info untouched on failure")
        }
        #expect(deskaudio_parse_frame(nil, 40, nil, MemoryLayout<deskaudio_frame_info>.size) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(String(cString: deskaudio_strerror(deskaudio_status.DESKAUDIO_ERROR_FRAME_MAGIC.rawValue)!) == "not an AudioFrame")
    }

    @Test func theDecoderHandleDecodesConcealsAndCounts() throws {
        var frames = try Self.encodedTone(frames: 50)
        frames.remove(at: 20)
        let decoder = try #require(deskaudio_decoder_create())
        defer { deskaudio_decoder_destroy(decoder) }
        var pcm = [Float](repeating: 0, count: Int(DESKAUDIO_DECODER_MAX_SAMPLES) * 2)
        var decoded: [Float] = []
        for frame in frames {
            let samples = frame.withUnsafeBufferPointer { bytes in
                pcm.withUnsafeMutableBufferPointer {
                    deskaudio_decoder_decode(decoder, bytes.baseAddress, bytes.count, $0.baseAddress, Int(DESKAUDIO_DECODER_MAX_SAMPLES))
                }
            }
            #expect(samples > 0)
            decoded += pcm[0..<(Int(samples) * 2)]
        }
        #expect(decoded.count == 50 * 960, "the lost frame was concealed in place")
        var stats = deskaudio_decoder_stats()
        #expect(deskaudio_decoder_get_stats(decoder, &stats, MemoryLayout<deskaudio_decoder_stats>.size) == deskaudio_status.DESKAUDIO_OK.rawValue)
        #expect(stats.frames_decoded == 49 && stats.frames_lost == 1 && stats.frames_concealed == 1)
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(decoded[4800...])) - 440) < 5)

        let garbage: [UInt8] = [1, 2, 3, 4, 5, 6]
        let status = garbage.withUnsafeBufferPointer { bytes in
            pcm.withUnsafeMutableBufferPointer { deskaudio_decoder_decode(decoder, bytes.baseAddress, bytes.count, $0.baseAddress, 5280) }
        }
        #expect(status == deskaudio_status.DESKAUDIO_ERROR_FRAME_MAGIC.rawValue)
        #expect(deskaudio_decoder_decode(nil, nil, 0, nil, 0) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        let tooSmall = frames[0].withUnsafeBufferPointer { bytes in
            pcm.withUnsafeMutableBufferPointer { deskaudio_decoder_decode(decoder, bytes.baseAddress, bytes.count, $0.baseAddress, 100) }
        }
        #expect(tooSmall == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(deskaudio_decoder_get_stats(decoder, nil, MemoryLayout<deskaudio_decoder_stats>.size) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        deskaudio_decoder_destroy(nil)
    }

    /// A struct the library fills is written only as far as the size the host passes (its
    /// header's sizeof), and zeroed past the library's own size: a host built with an older
    /// header (fewer fields) or a newer one (more) of the same ABI reads its struct safely.
    @Test func filledStructsAreWrittenOnlyAsFarAsTheSizeTheHostPasses() throws {
        let frame = try Self.encodedTone(frames: 3)[2]
        let known = MemoryLayout<deskaudio_frame_info>.size
        let sequenceEnd = MemoryLayout<deskaudio_frame_info>.offset(of: \.sequence)! + 4
        var bytes = [UInt8](repeating: 0xEE, count: known + 16)
        func parse(size: Int) -> Int32 {
            frame.withUnsafeBufferPointer { frame in
                bytes.withUnsafeMutableBytes {
                    deskaudio_parse_frame(frame.baseAddress, frame.count, $0.baseAddress!.assumingMemoryBound(to: deskaudio_frame_info.self), size)
                }
            }
        }
        #expect(parse(size: sequenceEnd) == deskaudio_status.DESKAUDIO_OK.rawValue)
        #expect(bytes[sequenceEnd...].allSatisfy { $0 == 0xEE }, "nothing written past an older header's struct")
        let info = bytes.withUnsafeBytes { $0.loadUnaligned(as: deskaudio_frame_info.self) }
        #expect(info.sequence == 2 && info.sample_clock == 960, "the fields an older header has are filled")

        #expect(parse(size: known + 8) == deskaudio_status.DESKAUDIO_OK.rawValue)
        #expect(bytes[known..<(known + 8)].allSatisfy { $0 == 0 }, "fields a newer header has are zeroed")
        #expect(bytes[(known + 8)...].allSatisfy { $0 == 0xEE })

        bytes = [UInt8](repeating: 0xEE, count: known + 16)
        #expect(parse(size: 0) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(String(cString: deskaudio_last_error()!).contains("info_size is 0"))
        #expect(bytes.allSatisfy { $0 == 0xEE }, "nothing written for a size of 0")

        let decoder = try #require(deskaudio_decoder_create())
        defer { deskaudio_decoder_destroy(decoder) }
        var stats = deskaudio_decoder_stats()
        stats.gaps = 99
        let beforeGaps = MemoryLayout<deskaudio_decoder_stats>.offset(of: \.gaps)!
        #expect(deskaudio_decoder_get_stats(decoder, &stats, beforeGaps) == deskaudio_status.DESKAUDIO_OK.rawValue)
        #expect(stats.gaps == 99 && stats.frames_decoded == 0)
    }

    /// A 5.1 stream through the C decoder: made with DESKAUDIO_DECODER_AS_SENT it writes the
    /// six channels in the servers' order (each channel's tone where it was sent); made with
    /// 2 (or deskaudio_decoder_create()) it folds them to stereo.
    @Test func aSurroundStreamDecodesAsSentOrFoldedToStereo() throws {
        let tones: [Double] = [500, 700, 900, 60, 1100, 1300]
        var input = [Float](repeating: 0, count: 48_000 * 6)
        for channel in 0..<6 {
            for sample in 0..<48_000 {
                input[sample * 6 + channel] = 0.25 * Float(sin(2 * Double.pi * tones[channel] * Double(sample) / 48_000))
            }
        }
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder(layout: .surround51))
        var frames: [[UInt8]] = []
        input.withUnsafeBufferPointer { chunk in pipeline.process(chunk, endTimeNs: 0) { frames.append(Array($0)) } }

        func decodeAll(_ decoder: deskaudio_decoder, floatsPerSample: Int) -> [Float] {
            var pcm = [Float](repeating: 0, count: Int(DESKAUDIO_DECODER_MAX_SAMPLES) * floatsPerSample)
            var out: [Float] = []
            for frame in frames {
                let samples = frame.withUnsafeBufferPointer { bytes in
                    deskaudio_decoder_decode(decoder, bytes.baseAddress, bytes.count, &pcm, Int(DESKAUDIO_DECODER_MAX_SAMPLES))
                }
                #expect(samples == 480)
                out += pcm[0..<(Int(samples) * Int(deskaudio_decoder_get_channels(decoder)))]
            }
            return out
        }
        let asSent = try #require(deskaudio_decoder_create_with_output(DESKAUDIO_DECODER_AS_SENT))
        defer { deskaudio_decoder_destroy(asSent) }
        #expect(deskaudio_decoder_get_channels(asSent) == 2, "2 until a frame arrives")
        let six = decodeAll(asSent, floatsPerSample: Int(DESKAUDIO_DECODER_MAX_CHANNELS))
        #expect(deskaudio_decoder_get_channels(asSent) == 6)
        #expect(six.count == 48_000 * 6)
        for channel in 0..<6 {
            let samples = (12_000..<36_000).map { six[$0 * 6 + channel] }
            let own = SignalAnalysis.toneLevelDecibels(samples, frequency: tones[channel])
            #expect(abs(own - 20 * log10(0.25 / 2.0.squareRoot())) <= 1, "channel \(channel): \(own) dBFS")
        }
        let folded = try #require(deskaudio_decoder_create_with_output(2))
        defer { deskaudio_decoder_destroy(folded) }
        let stereo = decodeAll(folded, floatsPerSample: 2)
        #expect(deskaudio_decoder_get_channels(folded) == 2 && stereo.count == 48_000 * 2)
        let left = (12_000..<36_000).map { stereo[$0 * 2] }
        #expect(abs(SignalAnalysis.toneLevelDecibels(left, frequency: 900) - (20 * log10(0.25 / 2.0.squareRoot()) - 3.01)) <= 1)
        #expect(deskaudio_decoder_create_with_output(6) == nil)
        #expect(String(cString: deskaudio_last_error()!).contains("not 2 or DESKAUDIO_DECODER_AS_SENT"))
    }
}
