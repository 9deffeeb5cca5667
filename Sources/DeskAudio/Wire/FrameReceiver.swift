/// The receiving side of one stream of AudioFrames: parses each frame, notices frames lost
/// in transit by their sequence numbers and conceals them (rebuilt from the next packet's
/// in-band FEC when it carries any, else Opus packet-loss concealment), and decodes to
/// 48 kHz interleaved stereo floats. Frames the sender's zero gate held back are never
/// concealed: they were not sent, so they leave no hole in the sequence (the after-gap
/// flag and the sample clock say how long the sender was silent). Decoding allocates
/// nothing. Not thread-safe: one receiver per stream, one thread at a time.
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

    /// 100 ms: the longest hole concealed; a longer one is played as a jump.
    public static let maxConcealedFrames = 10
    /// Floats of output that always suffice: a frame plus the longest concealment.
    public static let outputFloatsNeeded = (maxConcealedFrames + 1) * AudioFormat.frameFloats

    /// Counts so far.
    public private(set) var counters = Counters()
    private let decoder: OpusFrameDecoder
    private var expectedSequence: UInt32?

    /// A receiver with a fresh Opus decoder.
    public init() throws(DeskAudioError) {
        decoder = try OpusFrameDecoder()
    }

    /// Decodes one AudioFrame into `output` and returns the samples per channel written:
    /// first the concealment of frames lost just before it (if any), then the frame. A late
    /// or repeated frame writes nothing and returns 0. With fewer than
    /// `outputFloatsNeeded` floats of output, only the concealment that fits is written.
    /// Throws `.invalidFrame` for bytes that are not an AudioFrame, `.invalidArgument` when
    /// `output` cannot hold the frame; the receiver's state is then unchanged.
    public func receive(
        _ bytes: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Float>
    ) throws(DeskAudioError) -> Int {
        let frame: AudioFrameParser.Frame
        do { frame = try AudioFrameParser.parse(bytes) } catch { throw .invalidFrame(error) }
        let header = frame.header
        let frameFloats = Int(header.frameSamples) * AudioFormat.channels
        guard output.count >= frameFloats else {
            throw .invalidArgument(
                "the output holds \(output.count / AudioFormat.channels) samples per channel; "
                    + "the frame needs \(header.frameSamples)")
        }
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
        if lost > 0 && lost <= FrameReceiver.maxConcealedFrames {
            let room = (output.count - frameFloats) / frameFloats
            let concealed = min(lost, room)
            for index in 0..<concealed {
                // The last lost frame may be rebuilt from this packet's FEC data.
                let last = index == concealed - 1
                written += try decoder.decode(
                    last ? frame.payload : nil,
                    into: UnsafeMutableBufferPointer(rebasing: output[(written * AudioFormat.channels)...]),
                    lostSamples: Int(header.frameSamples), recoverPrevious: last)
            }
            counters.framesConcealed += UInt64(concealed)
        }
        written += try decoder.decode(
            frame.payload,
            into: UnsafeMutableBufferPointer(
                rebasing: output[(written * AudioFormat.channels)..<(written * AudioFormat.channels + frameFloats)]))
        counters.framesDecoded += 1
        return written
    }
}
