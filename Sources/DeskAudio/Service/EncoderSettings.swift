import Synchronization

/// Encoder settings a host may change from any thread while audio flows. Setters
/// validate and store; the worker applies them before the next frame.
public final class EncoderSettings: Sendable {
    private let bitrate = Atomic<Int32>(OpusFrameEncoder.defaultBitrate)
    private let complexity = Atomic<Int32>(10)

    /// Settings at their defaults (128 kbit/s, complexity 10).
    public init() {}

    /// The requested bitrate, bits per second.
    public var requestedBitrate: Int32 { bitrate.load(ordering: .relaxed) }
    /// The requested complexity, 0–10.
    public var requestedComplexity: Int32 { complexity.load(ordering: .relaxed) }

    /// Requests a bitrate (6 000–510 000 bit/s).
    public func setBitrate(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.bitrateRange.contains(value) else {
            throw .invalidArgument("bitrate \(value) is outside 6000...510000 bit/s")
        }
        bitrate.store(value, ordering: .relaxed)
    }

    /// Requests a complexity (0–10).
    public func setComplexity(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.complexityRange.contains(value) else {
            throw .invalidArgument("complexity \(value) is outside 0...10")
        }
        complexity.store(value, ordering: .relaxed)
    }

    /// Worker thread: brings `encoder` in line with the requests (a no-op when it is).
    func apply(to encoder: OpusFrameEncoder) {
        let wantedBitrate = requestedBitrate
        if encoder.bitrate != wantedBitrate { try? encoder.setBitrate(wantedBitrate) }
        let wantedComplexity = requestedComplexity
        if encoder.complexity != wantedComplexity { try? encoder.setComplexity(wantedComplexity) }
    }
}
