import COpus

/// libopus decoding to 48 kHz interleaved floats, with packet-loss concealment: stereo from
/// one-stream packets (mono ones are played on both channels), or a surround layout from
/// multistream packets, with channels in the library's order (`ChannelLayout`: FL FR FC LFE
/// RL RR SL SR), not the packets' Vorbis order.
public final class OpusFrameDecoder {
    private enum Handle {
        case single(OpaquePointer)
        case multistream(OpaquePointer)
    }

    private let handle: Handle
    /// Channels of the output, interleaved.
    public let channels: Int
    /// The multistream mapping it decodes; nil for one-stream (version 1) packets.
    public let mapping: OpusChannelMapping?

    /// A decoder for 48 kHz stereo output of one-stream packets.
    public init() throws(DeskAudioError) {
        var status: Int32 = OPUS_OK
        guard
            let created = opus_decoder_create(
                Int32(AudioFormat.sampleRate), Int32(AudioFormat.channels), &status), status == OPUS_OK
        else { throw .encoderFailed(String(cString: opus_strerror(status))) }
        handle = .single(created)
        channels = AudioFormat.channels
        mapping = nil
    }

    /// A decoder for packets of `mapping` (a version 2 frame's), writing its channels in the
    /// library's order. Throws `.invalidArgument` for a mapping libopus cannot decode.
    public init(mapping: OpusChannelMapping) throws(DeskAudioError) {
        if let problem = mapping.problem { throw .invalidArgument("channel mapping: \(problem)") }
        let channels = Int(mapping.channels)
        // The table says, per channel in Vorbis order, which decoded channel to take: read
        // it per channel in the library's order instead, so the output needs no reordering.
        // Layouts other than 5.1 and 7.1 keep the packet's order.
        let order = ChannelLayout(channels: channels).map { $0.mappingFamily == 1 ? $0.vorbisIndex : nil } ?? nil
        var table = [UInt8](repeating: 255, count: channels)  // once, at creation
        for channel in 0..<channels { table[channel] = mapping.table[order?[channel] ?? channel] }
        var status: Int32 = OPUS_OK
        guard
            let created = opus_multistream_decoder_create(
                Int32(AudioFormat.sampleRate), Int32(channels), Int32(mapping.streams), Int32(mapping.coupledStreams),
                &table, &status), status == OPUS_OK
        else { throw .invalidArgument("libopus refused the channel mapping: \(String(cString: opus_strerror(status)))") }
        handle = .multistream(created)
        self.channels = channels
        self.mapping = mapping
    }

    deinit {
        switch handle {
        case .single(let decoder): opus_decoder_destroy(decoder)
        case .multistream(let decoder): opus_multistream_decoder_destroy(decoder)
        }
    }

    /// Decodes `packet` into `output` (interleaved, `channels` per sample) and returns samples
    /// per channel. A nil packet conceals one lost frame of `lostSamples` samples per channel
    /// (PLC). With `recoverPrevious`, `packet` is the one after a lost frame, and that lost
    /// frame of `lostSamples` is rebuilt from the packet's in-band FEC data (PLC when it has none).
    public func decode(
        _ packet: UnsafeRawBufferPointer?, into output: UnsafeMutableBufferPointer<Float>,
        lostSamples: Int = AudioFormat.frameSamples, recoverPrevious: Bool = false
    ) throws(DeskAudioError) -> Int {
        let capacity = output.count / channels
        guard let samples = output.baseAddress, capacity > 0 else {
            throw .invalidArgument("the output buffer holds no whole sample of \(channels) channels")
        }
        let concealing = packet == nil || recoverPrevious
        let frameSize = Int32(concealing ? min(lostSamples, capacity) : capacity)
        let data = packet?.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let length = Int32(packet?.count ?? 0)
        let fec: Int32 = recoverPrevious ? 1 : 0
        let decoded =
            switch handle {
            case .single(let decoder): opus_decode_float(decoder, data, length, samples, frameSize, fec)
            case .multistream(let decoder): opus_multistream_decode_float(decoder, data, length, samples, frameSize, fec)
            }
        guard decoded >= 0 else { throw .encoderFailed(String(cString: opus_strerror(decoded))) }
        return Int(decoded)
    }
}
