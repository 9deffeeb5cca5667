import Synchronization

/// Encoder and pipeline settings a host may change from any thread while audio flows.
/// Setters validate and store; the worker applies them before the next frame, reading
/// atomics only. The bitrate adapter's state is behind a mutex that only the host's calls
/// take, never the worker or the capture thread.
public final class EncoderSettings: Sendable {
    private let bitrate = Atomic<Int32>(OpusFrameEncoder.defaultBitrate)
    private let complexity = Atomic<Int32>(OpusFrameEncoder.defaultComplexity)
    private let fec = Atomic<Bool>(false)
    private let expectedLossPercent = Atomic<Int32>(0)
    private let gateEnabled = Atomic<Bool>(true)
    private let frameSamples = Atomic<Int>(FrameDuration.ms10.samples)
    // True once the host chose a bitrate: a layout's default no longer replaces it.
    private let bitrateChosen = Atomic<Bool>(false)
    private let adapter = LockedValue(BitrateAdapter())

    /// Settings at their defaults (128 kbit/s, complexity 10, FEC off, gate on, 10 ms frames).
    public init() {}

    /// The requested bitrate, bits per second.
    public var requestedBitrate: Int32 { bitrate.load(ordering: .relaxed) }
    /// The requested complexity, 0–10.
    public var requestedComplexity: Int32 { complexity.load(ordering: .relaxed) }
    /// True when the zero gate is on.
    public var isGateEnabled: Bool { gateEnabled.load(ordering: .relaxed) }
    /// The requested frame length.
    public var frameDuration: FrameDuration {
        FrameDuration(rawValue: frameSamples.load(ordering: .relaxed)) ?? .ms10
    }

    /// Requests a bitrate (6 000–510 000 bit/s); loss reports step on from it.
    public func setBitrate(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.bitrateRange.contains(value) else {
            throw .invalidArgument("bitrate \(value) is outside 6000...510000 bit/s")
        }
        bitrate.store(value, ordering: .relaxed)
        bitrateChosen.store(true, ordering: .relaxed)
        adapter.withLock { $0.reset(to: value) }
    }

    /// A capture starts in `layout`: unless the host chose a bitrate, the layout's default
    /// (64 kbit/s mono, 128 stereo, 256 for 5.1, 450 for 7.1) becomes the one requested and
    /// the one loss reports step from. Returns the bitrate requested now.
    @discardableResult
    public func useDefaults(for layout: ChannelLayout) -> Int32 {
        guard !bitrateChosen.load(ordering: .relaxed) else { return requestedBitrate }
        let value = OpusFrameEncoder.defaultBitrate(for: layout)
        let inRange = adapter.withLock { adapter -> Int32 in
            adapter.reset(to: value)
            return adapter.bitrate
        }
        bitrate.store(inRange, ordering: .relaxed)
        return inRange
    }

    /// Requests a complexity (0–10).
    public func setComplexity(_ value: Int32) throws(DeskAudioError) {
        guard OpusFrameEncoder.complexityRange.contains(value) else {
            throw .invalidArgument("complexity \(value) is outside 0...10")
        }
        complexity.store(value, ordering: .relaxed)
    }

    /// Turns in-band FEC on or off and sets the loss (0–100 %) the encoder plans for.
    public func setLossProtection(fec enabled: Bool, expectedLossPercent percent: Int32) throws(DeskAudioError) {
        guard (0...100).contains(percent) else {
            throw .invalidArgument("expected packet loss \(percent) % is outside 0...100")
        }
        fec.store(enabled, ordering: .relaxed)
        expectedLossPercent.store(percent, ordering: .relaxed)
    }

    /// Turns the zero gate on (the default) or off (every frame is sent).
    public func setGate(enabled: Bool) {
        gateEnabled.store(enabled, ordering: .relaxed)
    }

    /// Sets the frame length; frames change to it at the next frame boundary.
    public func setFrameDuration(_ duration: FrameDuration) {
        frameSamples.store(duration.samples, ordering: .relaxed)
    }

    /// Sets the range loss reports step the bitrate within (default 6 000–510 000).
    public func setBitrateRange(minimum: Int32, maximum: Int32) throws(DeskAudioError) {
        let current = try adapter.withLock { (adapter) throws(DeskAudioError) -> Int32 in
            try adapter.setRange(minimum: minimum, maximum: maximum)
            return adapter.bitrate
        }
        bitrate.store(current, ordering: .relaxed)
    }

    /// Takes the packet loss the host observed over one interval (0–1): steps the bitrate
    /// (`BitrateAdapter`), sets the expected loss and FEC. Returns the new bitrate.
    public func reportLoss(_ loss: Float) throws(DeskAudioError) -> Int32 {
        let decision = try adapter.withLock { (adapter) throws(DeskAudioError) in try adapter.report(loss: loss) }
        bitrate.store(decision.bitrate, ordering: .relaxed)
        fec.store(decision.fec, ordering: .relaxed)
        expectedLossPercent.store(decision.expectedLossPercent, ordering: .relaxed)
        return decision.bitrate
    }

    /// Brings `pipeline` in line with the requests; cheap when it already is. The service's
    /// worker calls it before every chunk; a caller driving its own pipeline does likewise.
    public func apply(to pipeline: FramePipeline) {
        let encoder = pipeline.encoder
        let wantedBitrate = requestedBitrate
        if encoder.bitrate != wantedBitrate { try? encoder.setBitrate(wantedBitrate) }
        let wantedComplexity = requestedComplexity
        if encoder.complexity != wantedComplexity { try? encoder.setComplexity(wantedComplexity) }
        let wantedFEC = fec.load(ordering: .relaxed)
        let wantedLoss = expectedLossPercent.load(ordering: .relaxed)
        if encoder.fec != wantedFEC || encoder.expectedLossPercent != wantedLoss {
            try? encoder.setLossProtection(fec: wantedFEC, expectedLossPercent: wantedLoss)
        }
        pipeline.gate.isEnabled = isGateEnabled
        let wantedDuration = frameDuration
        if pipeline.frameDuration != wantedDuration { pipeline.setFrameDuration(wantedDuration) }
    }
}
