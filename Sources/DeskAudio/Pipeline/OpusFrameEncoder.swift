import COpus
import DeskAudioShim

/// libopus, set up for 48 kHz frames of 2.5, 5, 10 or 20 ms in one `ChannelLayout`: one
/// Opus stream for mono and stereo, a multistream encoder (mapping family 1) for 5.1 and 7.1,
/// its streams as `SurroundStreams` says. Encoding allocates nothing.
public final class OpusFrameEncoder {
    /// How 5.1 and 7.1 are split into Opus streams (both are channel mapping family 1, which
    /// every family 1 decoder reads from the frame's stream counts and table).
    public enum SurroundStreams: Sendable, Equatable {
        /// libopus's surround encoder (the default): the front, rear and side pairs coupled,
        /// the LFE coded as one, bits spread by its surround masking. The best quality per
        /// bit; another channel's tone shows at −46 to −48 dB (docs/encoding.md).
        case coupled
        /// One mono stream per channel, none coupled (Sunshine's high-quality layout): the
        /// channels kept apart to libopus's noise floor (−61 dB), at a cost in bits, since
        /// a pair's likeness is not shared and the LFE gets a full channel's share.
        case discrete

        /// What an encoder of `layout` does with this choice: mono and stereo are one stream
        /// (`.coupled`) whatever was asked.
        public func applied(to layout: ChannelLayout) -> SurroundStreams {
            layout.mappingFamily == 0 ? .coupled : self
        }
    }

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
    /// The largest packet one frame of one Opus stream can produce (RFC 6716: 1275 bytes).
    public static let maxPacketBytes = 1275

    /// The default bitrate for `layout`: 64 kbit/s mono, 128 stereo, 256 for 5.1 and 450 for
    /// 7.1 (Sunshine's surround defaults).
    public static func defaultBitrate(for layout: ChannelLayout) -> Int32 {
        switch layout {
        case .mono: 64_000
        case .stereo: defaultBitrate
        case .surround51: 256_000
        case .surround71: 450_000
        }
    }

    /// The largest packet one frame of `layout` can produce in any `SurroundStreams`: 1275
    /// bytes per stream (at most one stream per channel), plus the self-delimiting length (at
    /// most 2 bytes) of every stream but the last.
    public static func maxPacketBytes(for layout: ChannelLayout) -> Int {
        let streams = layout.mappingFamily == 0 ? 1 : layout.channels
        return streams * maxPacketBytes + (streams - 1) * 2
    }

    private enum Handle {
        case single(OpaquePointer)
        case multistream(OpaquePointer)
    }

    private let handle: Handle
    /// The channels it encodes, interleaved in the library's order (`ChannelLayout`).
    public let layout: ChannelLayout
    /// How 5.1 and 7.1 are split into streams (`.coupled` for mono and stereo).
    public let surroundStreams: SurroundStreams
    /// The streams, coupled streams and channel mapping table (RFC 7845 §5.1.1) of its
    /// packets: what a decoder needs, and what a surround AudioFrame carries.
    public let mapping: OpusChannelMapping
    // Surround input reordered into Vorbis order, the surround encoder's (longest frame),
    // and each channel's place in it.
    private let vorbisOrdered: UnsafeMutableBufferPointer<Float>
    private let vorbisOrder: [Int]
    /// Bits per second currently set.
    public private(set) var bitrate: Int32
    /// Complexity currently set (0–10).
    public private(set) var complexity: Int32
    /// In-band FEC as last set (off at first).
    public private(set) var fec = false
    /// Expected packet loss as last set, percent (0 at first).
    public private(set) var expectedLossPercent: Int32 = 0

    /// Creates an encoder for `layout` at `bitrate` (nil: the layout's default), 5.1 and 7.1
    /// split into streams as `surroundStreams` says; throws `.encoderFailed` with libopus's
    /// message if it cannot.
    public init(
        layout: ChannelLayout = .stereo, application: Application = .restrictedLowDelay, bitrate: Int32? = nil,
        complexity: Int32 = OpusFrameEncoder.defaultComplexity, surroundStreams: SurroundStreams = .coupled
    ) throws(DeskAudioError) {
        var status: Int32 = OPUS_OK
        var streams: Int32 = 0
        var coupled: Int32 = 0
        var table = (0..<8).map { UInt8($0) }  // once, at creation; identity unless the surround encoder sets it
        let created: OpaquePointer?
        if layout.mappingFamily == 0 {
            created = opus_encoder_create(Int32(AudioFormat.sampleRate), Int32(layout.channels), application.opusValue, &status)
            streams = 1
            coupled = layout == .stereo ? 1 : 0
        } else if surroundStreams == .discrete {
            // Vorbis order in, stream i carries Vorbis channel i.
            streams = Int32(layout.channels)
            created = opus_multistream_encoder_create(
                Int32(AudioFormat.sampleRate), Int32(layout.channels), streams, 0, &table, application.opusValue, &status)
        } else {
            created = opus_multistream_surround_encoder_create(
                Int32(AudioFormat.sampleRate), Int32(layout.channels), Int32(layout.mappingFamily), &streams, &coupled,
                &table, application.opusValue, &status)
        }
        guard let created, status == OPUS_OK else { throw .encoderFailed(OpusFrameEncoder.message(status)) }
        handle = layout.mappingFamily == 0 ? .single(created) : .multistream(created)
        self.layout = layout
        self.surroundStreams = surroundStreams.applied(to: layout)
        mapping = OpusChannelMapping(
            family: layout.mappingFamily, streams: UInt8(streams), coupledStreams: UInt8(coupled),
            table: table, channels: layout.channels)
        vorbisOrder = layout.vorbisIndex
        vorbisOrdered = .zeroed(FrameDuration.longest.samples * layout.channels)
        let bitrate = bitrate ?? OpusFrameEncoder.defaultBitrate(for: layout)
        self.bitrate = bitrate
        self.complexity = complexity
        _ = set(OPUS_SET_VBR_REQUEST, 1)
        // Throwing from here on runs deinit, which destroys the encoder.
        try setBitrate(bitrate)
        try setComplexity(complexity)
    }

    deinit {
        switch handle {
        case .single(let encoder): opus_encoder_destroy(encoder)
        case .multistream(let encoder): opus_multistream_encoder_destroy(encoder)
        }
        vorbisOrdered.deallocate()
    }

    /// Sets the target bitrate in bits per second (6 000–510 000).
    public func setBitrate(_ bitsPerSecond: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.bitrateRange.contains(bitsPerSecond) else {
            throw .invalidArgument("bitrate \(bitsPerSecond) is outside 6000...510000 bit/s")
        }
        try check(set(OPUS_SET_BITRATE_REQUEST, bitsPerSecond))
        bitrate = bitsPerSecond
    }

    /// Sets the encoder's complexity (0 fastest … 10 best).
    public func setComplexity(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.complexityRange.contains(value) else {
            throw .invalidArgument("complexity \(value) is outside 0...10")
        }
        try check(set(OPUS_SET_COMPLEXITY_REQUEST, value))
        complexity = value
    }

    /// Turns in-band FEC on or off and sets the packet loss (0–100 %) the encoder plans
    /// for. FEC data is carried by SILK and hybrid packets only: in restricted low-delay
    /// mode (CELT only) the request is accepted and has no effect.
    public func setLossProtection(fec: Bool, expectedLossPercent: Int32) throws(DeskAudioError) {
        guard (0...100).contains(expectedLossPercent) else {
            throw .invalidArgument("expected packet loss \(expectedLossPercent) % is outside 0...100")
        }
        try check(set(OPUS_SET_INBAND_FEC_REQUEST, fec ? 1 : 0))
        try check(set(OPUS_SET_PACKET_LOSS_PERC_REQUEST, expectedLossPercent))
        self.fec = fec
        self.expectedLossPercent = expectedLossPercent
    }

    /// What libopus reports for in-band FEC and expected loss (to check the settings took).
    public var lossProtectionInEncoder: (fec: Bool, expectedLossPercent: Int32) {
        (self.get(OPUS_GET_INBAND_FEC_REQUEST) != 0, self.get(OPUS_GET_PACKET_LOSS_PERC_REQUEST))
    }

    /// Samples at 48 kHz the decoder must skip at the start (Ogg Opus pre-skip).
    public var lookahead: Int32 { self.get(OPUS_GET_LOOKAHEAD_REQUEST) }

    /// Forgets the audio encoded so far (OPUS_RESET_STATE), settings kept: the next frame
    /// starts a new signal, with nothing of the old one in its look-ahead or prediction.
    /// Allocates nothing.
    public func reset() {
        switch handle {
        case .single(let encoder): _ = deskaudio_shim_encoder_reset_state(encoder)
        case .multistream(let encoder): _ = deskaudio_shim_ms_encoder_reset_state(encoder)
        }
    }

    /// Encodes one frame (interleaved floats of the layout's channels, in its order, for a
    /// `FrameDuration`: 120, 240, 480 or 960 samples per channel) into `packet`; returns the
    /// packet's length.
    public func encode(
        _ frame: UnsafeBufferPointer<Float>, into packet: UnsafeMutableBufferPointer<UInt8>
    ) throws(DeskAudioError) -> Int {
        let channels = layout.channels
        guard let duration = FrameDuration(rawValue: frame.count / channels),
            frame.count == duration.samples * channels, let samples = frame.baseAddress, let output = packet.baseAddress
        else {
            throw .invalidArgument(
                "a frame is 120, 240, 480 or 960 samples of \(channels) interleaved channels (2.5 to 20 ms), "
                    + "into a non-empty packet buffer")
        }
        let length: Int32
        switch handle {
        case .single(let encoder):
            length = opus_encode_float(encoder, samples, Int32(duration.samples), output, Int32(packet.count))
        case .multistream(let encoder):
            let ordered = vorbisOrdered.baseAddress!
            vorbisOrder.withUnsafeBufferPointer { order in
                for sample in 0..<duration.samples {
                    let base = sample * channels
                    for channel in 0..<channels { ordered[base + order[channel]] = samples[base + channel] }
                }
            }
            length = opus_multistream_encode_float(encoder, ordered, Int32(duration.samples), output, Int32(packet.count))
        }
        guard length > 0 else { throw .encoderFailed(OpusFrameEncoder.message(length)) }
        return Int(length)
    }

    private func set(_ request: Int32, _ value: Int32) -> Int32 {
        switch handle {
        case .single(let encoder): deskaudio_shim_encoder_set(encoder, request, value)
        case .multistream(let encoder): deskaudio_shim_ms_encoder_set(encoder, request, value)
        }
    }

    private func get(_ request: Int32) -> Int32 {
        var value: Int32 = 0
        switch handle {
        case .single(let encoder): _ = deskaudio_shim_encoder_get(encoder, request, &value)
        case .multistream(let encoder): _ = deskaudio_shim_ms_encoder_get(encoder, request, &value)
        }
        return value
    }

    private func check(_ status: Int32) throws(DeskAudioError) {
        guard status == OPUS_OK else { throw .encoderFailed(OpusFrameEncoder.message(status)) }
    }

    static func message(_ status: Int32) -> String {
        String(cString: opus_strerror(status))
    }
}
