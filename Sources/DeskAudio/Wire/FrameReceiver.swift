/// The receiving side of one stream of AudioFrames: parses each frame, notices frames lost
/// in transit by their sequence numbers and conceals them (rebuilt from the next packet's
/// in-band FEC when it carries any, else Opus packet-loss concealment), and decodes to
/// 48 kHz interleaved floats: stereo, surround frames folded by `StereoDownmix`, or, when
/// asked, each frame's own channels (library order, `ChannelLayout`). Frames the sender's
/// zero gate held back are never concealed: they were not sent, so they leave no hole in the
/// sequence (the after-gap flag and the sample clock say how long the sender was silent).
/// Decoding allocates nothing, except once when the stream's channel layout changes (a new
/// decoder). Not thread-safe: one receiver per stream, one thread at a time.
public final class FrameReceiver {
    /// Running counts.
    public struct Counters: Equatable, Sendable {
        /// Frames decoded.
        public var framesDecoded: UInt64 = 0
        /// Frames lost in transit (holes in the sequence).
        public var framesLost: UInt64 = 0
        /// Lost frames replaced by concealment (FEC or PLC).
        public var framesConcealed: UInt64 = 0
        /// Frames that arrived after a later one, or twice: dropped.
        public var framesLate: UInt64 = 0
        /// Frames flagged as the first after the sender's silence.
        public var gaps: UInt64 = 0
    }

    /// What the receiver writes.
    public enum Output: Sendable {
        /// Interleaved stereo; surround folded by `StereoDownmix`.
        case stereo
        /// Each frame's own channels: 2 for mono and stereo frames (mono on both), 6 for 5.1,
        /// 8 for 7.1 (`channels` says how many the last frame had).
        case asSent
    }

    /// 100 ms, in samples per channel: the longest hole concealed (10 frames of 10 ms, 40 of
    /// 2.5 ms, 5 of 20 ms); a longer one is played as a jump.
    public static let maxConcealedSamples = 4_800
    /// Samples per channel in the longest frame the wire format allows (60 ms).
    public static let longestFrameSamples = 2_880
    /// Floats of stereo output that always suffice: the longest concealment plus the longest frame.
    public static let outputFloatsNeeded = (maxConcealedSamples + longestFrameSamples) * AudioFormat.channels

    /// Counts so far.
    public private(set) var counters = Counters()
    /// What it writes.
    public let output: Output
    private var decoder: OpusFrameDecoder
    // Surround decoded here before it is folded into stereo output; made with its decoder.
    private var unfolded: UnsafeMutableBufferPointer<Float>?
    private var expectedSequence: UInt32?

    /// A receiver writing `output`, with a fresh Opus decoder.
    public init(output: Output = .stereo) throws(DeskAudioError) {
        self.output = output
        decoder = try OpusFrameDecoder()
    }

    deinit { unfolded?.deallocate() }

    /// Interleaved channels of what `receive` writes now: 2, or with `.asSent` the last
    /// frame's channels (2 until one arrives).
    public var channels: Int { output == .stereo ? AudioFormat.channels : decoder.channels }

    /// Decodes one AudioFrame into `output` and returns the samples per channel written:
    /// first the concealment of frames lost just before it (if any), then the frame. A late
    /// or repeated frame writes nothing and returns 0. With fewer than the longest
    /// concealment plus the longest frame of room (`outputFloatsNeeded` for stereo), only the
    /// concealment that fits is written. Throws `.invalidFrame` for bytes that are not an
    /// AudioFrame, `.invalidArgument` when `output` cannot hold the frame; the receiver's
    /// state is then unchanged.
    public func receive(
        _ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Float>
    ) throws(DeskAudioError) -> Int {
        let frame: AudioFrameParser.Frame
        do { frame = try AudioFrameParser.parse(bytes) } catch { throw .invalidFrame(error) }
        let header = frame.header
        let outputChannels = self.output == .stereo ? AudioFormat.channels : (header.mapping.map { Int($0.channels) } ?? 2)
        let frameFloats = Int(header.frameSamples) * outputChannels
        guard output.count >= frameFloats else {
            throw .invalidArgument(
                "the output holds \(output.count / outputChannels) samples of \(outputChannels) channels; "
                    + "the frame needs \(header.frameSamples)")
        }
        if header.mapping != decoder.mapping { try switchDecoder(to: header.mapping) }
        var lost = 0
        if let expected = expectedSequence {
            let ahead = header.sequence &- expected
            if ahead > UInt32.max / 2 {
                counters.framesLate += 1
                return 0
            }
            lost = Int(ahead)
        }
        expectedSequence = header.sequence &+ 1
        counters.framesLost += UInt64(lost)
        if header.flags.contains(.afterGap) { counters.gaps += 1 }

        var written = 0
        if lost > 0 && lost * Int(header.frameSamples) <= FrameReceiver.maxConcealedSamples {
            let room = (output.count - frameFloats) / frameFloats
            let concealed = min(lost, room)
            for index in 0..<concealed {
                // The last lost frame may be rebuilt from this packet's FEC data.
                let last = index == concealed - 1
                written += try decode(
                    last ? frame.payload : nil,
                    into: UnsafeMutableBufferPointer(rebasing: output[(written * outputChannels)...]),
                    samples: Int(header.frameSamples), recoverPrevious: last)
            }
            counters.framesConcealed += UInt64(concealed)
        }
        written += try decode(
            frame.payload,
            into: UnsafeMutableBufferPointer(rebasing: output[(written * outputChannels)..<(written * outputChannels + frameFloats)]),
            samples: Int(header.frameSamples), recoverPrevious: false)
        counters.framesDecoded += 1
        return written
    }

    // One frame, or one concealed frame, of `samples`: straight into `output`, or through
    // the surround buffer and the stereo fold.
    private func decode(
        _ packet: UnsafeRawBufferPointer?, into output: UnsafeMutableBufferPointer<Float>, samples: Int,
        recoverPrevious: Bool
    ) throws(DeskAudioError) -> Int {
        guard let unfolded, self.output == .stereo else {
            return try decoder.decode(packet, into: output, lostSamples: samples, recoverPrevious: recoverPrevious)
        }
        let room = UnsafeMutableBufferPointer(rebasing: unfolded[0..<(min(output.count / 2, samples) * decoder.channels)])
        let decoded = try decoder.decode(packet, into: room, lostSamples: samples, recoverPrevious: recoverPrevious)
        StereoDownmix.fold(UnsafeBufferPointer(room), channels: decoder.channels, samples: decoded, into: output)
        return decoded
    }

    // A new layout: a decoder for it (and, folding surround to stereo, a buffer for one frame
    // of it). Its lost-frame concealment starts afresh.
    private func switchDecoder(to mapping: OpusChannelMapping?) throws(DeskAudioError) {
        let next: OpusFrameDecoder
        if let mapping { next = try OpusFrameDecoder(mapping: mapping) } else { next = try OpusFrameDecoder() }
        unfolded?.deallocate()
        unfolded = nil
        if next.mapping != nil && output == .stereo {
            let buffer = UnsafeMutableBufferPointer<Float>.allocate(capacity: FrameReceiver.longestFrameSamples * next.channels)
            buffer.initialize(repeating: 0)
            unfolded = buffer
        }
        decoder = next
    }
}
