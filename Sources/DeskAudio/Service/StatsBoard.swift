import Synchronization

/// The worker's running counts and sample clock and the delivery thread's latency, published
/// for readers on other threads. Each value has one writer; every count is a relaxed atomic,
/// so no writer ever waits for a reader; the clock, several values read together, is a
/// locked copy.
final class StatsBoard: Sendable {
    private let framesCaptured = Atomic<UInt64>(0)
    private let framesSent = Atomic<UInt64>(0)
    private let framesGated = Atomic<UInt64>(0)
    private let framesFailed = Atomic<UInt64>(0)
    private let bytesSent = Atomic<UInt64>(0)
    private let lateDroppedSamples = Atomic<UInt64>(0)
    private let silenceFilledSamples = Atomic<UInt64>(0)
    private let latencyMeanNs = Atomic<UInt64>(0)
    private let latencyMaxNs = Atomic<UInt64>(0)
    private let sampleClock = LockedValue<CaptureClock?>(nil)

    /// Worker: the pipeline's and the mixer's counts so far.
    func publish(_ counters: FramePipeline.Counters, mixer: SourceMixer) {
        framesCaptured.store(counters.framesCaptured, ordering: .relaxed)
        framesSent.store(counters.framesSent, ordering: .relaxed)
        framesGated.store(counters.framesGated, ordering: .relaxed)
        framesFailed.store(counters.framesFailed, ordering: .relaxed)
        bytesSent.store(counters.bytesSent, ordering: .relaxed)
        lateDroppedSamples.store(mixer.lateDroppedSamples, ordering: .relaxed)
        silenceFilledSamples.store(mixer.silenceFilledSamples, ordering: .relaxed)
    }

    /// Worker: where the sample clock stands after the last chunk (a short lock: the
    /// worker is no server thread, and a reader holds it only to copy).
    func publishClock(_ clock: CaptureClock) {
        sampleClock.withLock { $0 = clock }
    }

    /// Where the sample clock stood after the worker's last chunk; nil before one.
    var clock: CaptureClock? { sampleClock.withLock { $0 } }

    /// Delivery thread: the callback latency over the last window of frames.
    func publishLatency(meanNs: UInt64, maxNs: UInt64) {
        latencyMeanNs.store(meanNs, ordering: .relaxed)
        latencyMaxNs.store(maxNs, ordering: .relaxed)
    }

    /// Any thread: the counts into `stats`.
    func read(into stats: inout CaptureStats) {
        let frame = UInt64(AudioFormat.frameSamples)
        stats.framesCaptured = framesCaptured.load(ordering: .relaxed)
        stats.framesSent = framesSent.load(ordering: .relaxed)
        stats.framesGated = framesGated.load(ordering: .relaxed)
        stats.framesDroppedEncoder = framesFailed.load(ordering: .relaxed)
        stats.bytesSent = bytesSent.load(ordering: .relaxed)
        stats.framesDroppedLate = lateDroppedSamples.load(ordering: .relaxed) / frame
        stats.framesSilenceFilled = silenceFilledSamples.load(ordering: .relaxed) / frame
        stats.callbackLatencyMeanNs = latencyMeanNs.load(ordering: .relaxed)
        stats.callbackLatencyMaxNs = latencyMaxNs.load(ordering: .relaxed)
    }
}
