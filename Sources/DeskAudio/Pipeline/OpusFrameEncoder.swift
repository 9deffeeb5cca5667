import COpus
import DeskAudioShim

/// libopus, set up for 48 kHz stereo 10 ms frames. Encoding allocates nothing.
public final class OpusFrameEncoder {
    /// The Opus application mode.
    public enum Application: Sendable {
        /// OPUS_APPLICATION_RESTRICTED_LOWDELAY: CELT only, 2.5 ms look-ahead (the default).
        case restrictedLowDelay
        /// OPUS_APPLICATION_AUDIO: best quality for music and mixed content, 6.5 ms look-ahead.
        case audio
        /// OPUS_APPLICATION_VOIP: tuned for speech.
        case voip

        var opusValue: Int32 {
            switch self {
            case .restrictedLowDelay: OPUS_APPLICATION_RESTRICTED_LOWDELAY
            case .audio: OPUS_APPLICATION_AUDIO
            case .voip: OPUS_APPLICATION_VOIP
            }
        }
    }

    /// 128 kbit/s: transparent for stereo desktop audio (music, video, games) in CELT
    /// mode at 10 ms frames; see docs/encoding.md.
    public static let defaultBitrate: Int32 = 128_000
    /// The range libopus accepts for a stereo stream.
    public static let bitrateRange: ClosedRange<Int32> = 6_000...510_000
    /// libopus's complexity range.
    public static let complexityRange: ClosedRange<Int32> = 0...10
    /// 10, libopus's own default and GStreamer opusenc's: the most analysis per frame, the
    /// best quality for the bitrate; see docs/encoding.md.
    public static let defaultComplexity: Int32 = 10
    /// The largest packet one frame can produce (RFC 6716: 1275 bytes per frame).
    public static let maxPacketBytes = 1275

    private let encoder: OpaquePointer
    /// Bits per second currently set.
    public private(set) var bitrate: Int32
    /// Complexity currently set (0–10).
    public private(set) var complexity: Int32
    /// In-band FEC as last set (off at first).
    public private(set) var fec = false
    /// Expected packet loss as last set, percent (0 at first).
    public private(set) var expectedLossPercent: Int32 = 0

    /// Creates an encoder; throws `.encoderFailed` with libopus's message if it cannot.
    public init(
        application: Application = .restrictedLowDelay,
        bitrate: Int32 = OpusFrameEncoder.defaultBitrate,
        complexity: Int32 = OpusFrameEncoder.defaultComplexity
    ) throws(DeskAudioError) {
        var status: Int32 = OPUS_OK
        guard
            let created = opus_encoder_create(
                Int32(AudioFormat.sampleRate), Int32(AudioFormat.channels), application.opusValue, &status
            ), status == OPUS_OK
        else {
            throw .encoderFailed(OpusFrameEncoder.message(status))
        }
        encoder = created
        self.bitrate = bitrate
        self.complexity = complexity
        _ = deskaudio_shim_encoder_set_vbr(encoder, 1)
        // Throwing from here on runs deinit, which destroys the encoder.
        try setBitrate(bitrate)
        try setComplexity(complexity)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Sets the target bitrate in bits per second (6 000–510 000).
    public func setBitrate(_ bitsPerSecond: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.bitrateRange.contains(bitsPerSecond) else {
            throw .invalidArgument("bitrate \(bitsPerSecond) is outside 6000...510000 bit/s")
        }
        try check(deskaudio_shim_encoder_set_bitrate(encoder, bitsPerSecond))
        bitrate = bitsPerSecond
    }

    /// Sets the encoder's complexity (0 fastest … 10 best).
    public func setComplexity(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.complexityRange.contains(value) else {
            throw .invalidArgument("complexity \(value) is outside 0...10")
        }
        try check(deskaudio_shim_encoder_set_complexity(encoder, value))
        complexity = value
    }

    /// Turns in-band FEC on or off and sets the packet loss (0–100 %) the encoder plans
    /// for. FEC data is carried by SILK and hybrid packets only: in restricted low-delay
    /// mode (CELT only) the request is accepted and has no effect.
    public func setLossProtection(fec: Bool, expectedLossPercent: Int32) throws(DeskAudioError) {
        guard (0...100).contains(expectedLossPercent) else {
            throw .invalidArgument("expected packet loss \(expectedLossPercent) % is outside 0...100")
        }
        try check(deskaudio_shim_encoder_set_inband_fec(encoder, fec ? 1 : 0))
        try check(deskaudio_shim_encoder_set_packet_loss_perc(encoder, expectedLossPercent))
        self.fec = fec
        self.expectedLossPercent = expectedLossPercent
    }

    /// What libopus reports for in-band FEC and expected loss (to check the settings took).
    public var lossProtectionInEncoder: (fec: Bool, expectedLossPercent: Int32) {
        var fec: Int32 = 0
        var percent: Int32 = 0
        _ = deskaudio_shim_encoder_get_inband_fec(encoder, &fec)
        _ = deskaudio_shim_encoder_get_packet_loss_perc(encoder, &percent)
        return (fec != 0, percent)
    }

    /// Samples at 48 kHz the decoder must skip at the start (Ogg Opus pre-skip).
    public var lookahead: Int32 {
        var samples: Int32 = 0
        _ = deskaudio_shim_encoder_get_lookahead(encoder, &samples)
        return samples
    }

    /// Forgets the audio encoded so far (OPUS_RESET_STATE), settings kept: the next frame
    /// starts a new signal, with nothing of the old one in its look-ahead or prediction.
    /// Allocates nothing.
    public func reset() {
        _ = deskaudio_shim_encoder_reset_state(encoder)
    }

    /// Encodes one frame (960 interleaved floats) into `packet`; returns the packet's length.
    public func encode(
        _ frame: UnsafeBufferPointer<Float>, into packet: UnsafeMutableBufferPointer<UInt8>
    ) throws(DeskAudioError) -> Int {
        guard frame.count == AudioFormat.frameFloats, let samples = frame.baseAddress,
            let output = packet.baseAddress
        else { throw .invalidArgument("a frame is 960 interleaved floats, into a non-empty packet buffer") }
        let length = opus_encode_float(
            encoder, samples, Int32(AudioFormat.frameSamples), output, Int32(packet.count))
        guard length > 0 else { throw .encoderFailed(OpusFrameEncoder.message(length)) }
        return Int(length)
    }

    private func check(_ status: Int32) throws(DeskAudioError) {
        guard status == OPUS_OK else { throw .encoderFailed(OpusFrameEncoder.message(status)) }
    }

    static func message(_ status: Int32) -> String {
        String(cString: opus_strerror(status))
    }
}
