import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

/// The viewer's side through the C ABI: a microphone's PCM pushed into deskaudio_encoder,
/// its frames decoded by deskaudio_decoder as a host would. No audio server needed.
@Suite struct EncoderThroughCABITests {
    /// Collects the frames a push hands to its callback.
    final class Frames: @unchecked Sendable {
        var all: [[UInt8]] = []
        var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
        static let callback: deskaudio_frame_callback = { bytes, length, userData in
            Unmanaged<Frames>.fromOpaque(userData!).takeUnretainedValue().all.append(
                Array(UnsafeBufferPointer(start: bytes, count: length)))
        }
    }

    @Test func aMicrophonesPCMDecodesToItsToneOnTheHostsDecoder() throws {
        let encoder = try #require(deskaudio_encoder_create())
        defer { deskaudio_encoder_destroy(encoder) }
        #expect(deskaudio_encoder_set_bitrate(encoder, 64_000) == 0)
        let frames = Frames()
        // 2 s of a 440 Hz tone at 0.25, s16 mono at 16 kHz, in 20 ms chunks as a client's
        // capture API hands them over (sine() counts at 48 kHz: 3x the frequency at 16 kHz).
        let tone = SignalAnalysis.left(SignalAnalysis.sine(frequency: 1320, amplitude: 0.25, frames: 32_000)[...])
            .map { Int16(($0 * 32767).rounded()) }
        for start in stride(from: 0, to: tone.count, by: 320) {
            let taken = tone[start..<(start + 320)].withUnsafeBytes {
                deskaudio_encoder_push_pcm(
                    encoder, $0.baseAddress, $0.count, deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue, 1, 16_000, 0,
                    Frames.callback, frames.userData)
            }
            #expect(taken == 320)
        }
        var stats = deskaudio_encoder_stats()
        #expect(deskaudio_encoder_get_stats(encoder, &stats, MemoryLayout<deskaudio_encoder_stats>.size) == 0)
        #expect(stats.frames_sent == UInt64(frames.all.count) && (198...200).contains(frames.all.count))
        #expect(stats.bytes_sent == UInt64(frames.all.map(\.count).reduce(0, +)))

        let decoder = try #require(deskaudio_decoder_create())
        defer { deskaudio_decoder_destroy(decoder) }
        var pcm = [Float](repeating: 0, count: Int(DESKAUDIO_DECODER_MAX_SAMPLES) * 2)
        var decoded: [Float] = []
        for frame in frames.all {
            var info = deskaudio_frame_info()
            #expect(frame.withUnsafeBufferPointer { deskaudio_parse_frame($0.baseAddress, $0.count, &info, MemoryLayout<deskaudio_frame_info>.size) } == 0)
            #expect(info.flags == UInt8(deskaudio_frame_flag.DESKAUDIO_FRAME_MIC.rawValue))
            let samples = frame.withUnsafeBufferPointer {
                deskaudio_decoder_decode(decoder, $0.baseAddress, $0.count, &pcm, Int(DESKAUDIO_DECODER_MAX_SAMPLES))
            }
            #expect(samples == 480)
            decoded += pcm[0..<(Int(max(samples, 0)) * 2)]
        }
        let left = SignalAnalysis.left(decoded[9600...])
        #expect(abs(SignalAnalysis.dominantFrequency(left) - 440) < 1)
        let level = SignalAnalysis.toneLevelDecibels(left, frequency: 440)
        #expect(abs(level - 20 * log10(0.25 / 2.0.squareRoot())) <= 1, "\(level) dBFS")
    }

    @Test func badCallsReturnClearErrors() throws {
        let encoder = try #require(deskaudio_encoder_create())
        defer { deskaudio_encoder_destroy(encoder) }
        let frames = Frames()
        let invalid = deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue
        let s16 = deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue
        let samples: [Int16] = [0, 0, 0, 0]
        func push(_ format: Int32, _ channels: Int32, _ rate: Int32, _ callback: deskaudio_frame_callback?) -> Int32 {
            samples.withUnsafeBytes {
                deskaudio_encoder_push_pcm(encoder, $0.baseAddress, $0.count, format, channels, rate, 0, callback, frames.userData)
            }
        }
        #expect(push(s16, 1, 16_000, nil) == invalid)
        #expect(String(cString: deskaudio_last_error()!) == "deskaudio_encoder_push_pcm: encoder or callback is NULL")
        #expect(push(7, 1, 16_000, Frames.callback) == invalid)
        #expect(String(cString: deskaudio_last_error()!) == "format 7 is not a deskaudio_pcm_format")
        #expect(push(s16, 3, 16_000, Frames.callback) == invalid)
        #expect(push(s16, 1, 200_000, Frames.callback) == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue)
        #expect(
            deskaudio_encoder_push_pcm(nil, nil, 0, s16, 1, 16_000, 0, Frames.callback, nil) == invalid)
        #expect(deskaudio_encoder_set_bitrate(encoder, 1) == invalid)
        #expect(deskaudio_encoder_set_complexity(encoder, 11) == invalid)
        #expect(deskaudio_encoder_get_stats(encoder, nil, MemoryLayout<deskaudio_encoder_stats>.size) == invalid)
        #expect(push(s16, 1, 16_000, Frames.callback) == 4, "the encoder still works")
    }

    @Test func echoCancellationIsTurnedOnAndFedThroughTheCABI() throws {
        let encoder = try #require(deskaudio_encoder_create())
        defer { deskaudio_encoder_destroy(encoder) }
        let invalid = deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue
        let s16 = deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue
        let samples: [Int16] = [0, 100, 0, -100]
        func playback(_ format: Int32, _ channels: Int32, _ rate: Int32) -> Int32 {
            samples.withUnsafeBytes { deskaudio_encoder_push_playback(encoder, $0.baseAddress, $0.count, format, channels, rate, 0) }
        }
        var stats = deskaudio_encoder_stats()
        #expect(deskaudio_encoder_get_stats(encoder, &stats, MemoryLayout<deskaudio_encoder_stats>.size) == 0)
        #expect(stats.echo_canceller == 0 && stats.echo_delay_ms == -1)
        #expect(deskaudio_encoder_set_echo_cancel(nil, true) == invalid)
        #expect(deskaudio_encoder_set_echo_cancel(encoder, true) == 0)
        #expect(playback(s16, 2, 48_000) == 2)
        #expect(playback(9, 2, 48_000) == invalid)
        #expect(String(cString: deskaudio_last_error()!) == "format 9 is not a deskaudio_pcm_format")
        #expect(playback(s16, 3, 48_000) == invalid)
        #expect(playback(s16, 1, 200_000) == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue)
        #expect(deskaudio_encoder_push_playback(nil, nil, 0, s16, 1, 48_000, 0) == invalid)
        #expect(deskaudio_encoder_push_playback(encoder, nil, 4, s16, 1, 48_000, 0) == invalid)
        #expect(deskaudio_encoder_get_stats(encoder, &stats, MemoryLayout<deskaudio_encoder_stats>.size) == 0)
        // The best there is: AEC3 where PipeWire's plugin has it, else speexdsp.
        #expect(stats.echo_canceller == EchoEngine.best.rawValue && stats.echo_delay_ms == -1 && stats.echo_blocks == 0)
        #expect(deskaudio_encoder_set_echo_canceller(encoder, 7) == invalid)
        #expect(String(cString: deskaudio_last_error()!) == "deskaudio_encoder_set_echo_canceller: 7 is no deskaudio_echo_canceller")
        #expect(deskaudio_encoder_set_echo_canceller(nil, 1) == invalid)
        #expect(deskaudio_encoder_set_echo_canceller(encoder, deskaudio_echo_canceller.DESKAUDIO_ECHO_CANCELLER_SPEEXDSP.rawValue) == 0)
        #expect(deskaudio_encoder_get_stats(encoder, &stats, MemoryLayout<deskaudio_encoder_stats>.size) == 0)
        #expect(stats.echo_canceller == deskaudio_echo_canceller.DESKAUDIO_ECHO_CANCELLER_SPEEXDSP.rawValue)
        if EchoEngine.best != .webrtcAEC3 {
            #expect(
                deskaudio_encoder_set_echo_canceller(encoder, deskaudio_echo_canceller.DESKAUDIO_ECHO_CANCELLER_WEBRTC_AEC3.rawValue)
                    == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue)
            #expect(String(cString: deskaudio_last_error()!).hasPrefix("WebRTC's AEC3: "))
        }
        #expect(deskaudio_encoder_set_echo_cancel(encoder, false) == 0)
        #expect(deskaudio_encoder_get_stats(encoder, &stats, MemoryLayout<deskaudio_encoder_stats>.size) == 0)
        #expect(stats.echo_canceller == 0)
    }
}
