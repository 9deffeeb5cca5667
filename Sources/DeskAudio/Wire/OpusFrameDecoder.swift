import COpus

/// libopus decoding to 48 kHz stereo floats, with packet-loss concealment.
public final class OpusFrameDecoder {
    private let decoder: OpaquePointer

    /// A decoder for 48 kHz stereo output.
    public init() throws(DeskAudioError) {
        var status: Int32 = OPUS_OK
        guard
            let created = opus_decoder_create(
                Int32(AudioFormat.sampleRate), Int32(AudioFormat.channels), &status), status == OPUS_OK
        else { throw .encoderFailed(String(cString: opus_strerror(status))) }
        decoder = created
    }

    deinit { opus_decoder_destroy(decoder) }

    /// Decodes `packet` into `output` (interleaved stereo) and returns samples per channel.
    /// A nil packet conceals one lost frame of `lostSamples` samples per channel (PLC). With
    /// `recoverPrevious`, `packet` is the one after a lost frame, and that lost frame of
    /// `lostSamples` is rebuilt from the packet's in-band FEC data (PLC when it has none).
    public func decode(
        _ packet: UnsafeRawBufferPointer?, into output: UnsafeMutableBufferPointer<Float>,
        lostSamples: Int = AudioFormat.frameSamples, recoverPrevious: Bool = false
    ) throws(DeskAudioError) -> Int {
        let capacity = output.count / AudioFormat.channels
        guard let samples = output.baseAddress, capacity > 0 else {
            throw .invalidArgument("the output buffer holds no stereo sample")
        }
        let concealing = packet == nil || recoverPrevious
        let frameSize = concealing ? min(lostSamples, capacity) : capacity
        let decoded = opus_decode_float(
            decoder, packet?.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(packet?.count ?? 0),
            samples, Int32(frameSize), recoverPrevious ? 1 : 0)
        guard decoded >= 0 else { throw .encoderFailed(String(cString: opus_strerror(decoded))) }
        return Int(decoded)
    }
}
