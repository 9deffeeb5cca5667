import Glibc
import Synchronization

/// The library's own thread: waits for captured audio, mixes the active sources, runs the
/// result through the pipeline and queues each AudioFrame for the delivery thread, which
/// calls the host. Neither runs on an audio server's thread, and the host never holds up
/// this one.
final class CaptureWorker: @unchecked Sendable {
    private let slots: SourceSlots
    private let inputs = MixerInputs()
    private let hostRing: SampleRing
    private let wake: WakeSignal
    private let pipeline: FramePipeline
    private let delivery: FrameDelivery
    private let settings: EncoderSettings
    private let mixer: SourceMixer
    private let stats: StatsBoard
    /// Set when a source was reopened after a failure: the next audio follows a gap.
    let gapPending = Atomic<Bool>(false)
    private var lastChunkEndNs: UInt64?
    private let thread: StoppableThread
    private let chunk: UnsafeMutableBufferPointer<Float>

    init(
        slots: SourceSlots, hostRing: SampleRing, wake: WakeSignal,
        pipeline: FramePipeline, delivery: FrameDelivery, settings: EncoderSettings, mixer: SourceMixer,
        stats: StatsBoard
    ) {
        self.slots = slots
        self.hostRing = hostRing
        self.wake = wake
        self.pipeline = pipeline
        self.delivery = delivery
        self.settings = settings
        self.mixer = mixer
        self.stats = stats
        thread = StoppableThread(wake: wake)
        chunk = .zeroed(4096)
    }

    deinit { chunk.deallocate() }

    /// Starts the thread, and the delivery thread behind it.
    func start() throws(DeskAudioError) {
        mixer.channels = pipeline.channels
        mixer.forgetLateAudio()  // a new run: nothing is owed from the last one
        try delivery.start()
        do throws(DeskAudioError) {
            try thread.start(named: "deskaudio-work") { [self] in run() }
        } catch {
            delivery.stop()
            throw error
        }
    }

    /// Stops both threads and waits for them; the pipeline is idle and no handler call is
    /// in progress when this returns. Frames not yet delivered are dropped. Must not be
    /// called on either thread.
    func stop() {
        guard thread.isRunning else { return }
        thread.stop()
        delivery.stop()
    }

    private func run() {
        var drainAgain = false
        while !thread.isStopping {
            if !drainAgain { wake.wait(milliseconds: 100) }
            let progressed = drain()
            // Sleep until a ring can complete the next frame (a server quantum shorter than
            // a frame would otherwise wake this thread about twice per frame); audio that
            // came in before the new threshold was set is drained without waiting.
            let needed = pipeline.floatsToNextFrame
            wake.awaitFloats(needed)
            drainAgain = progressed && activeRingsHold(needed)
        }
    }

    private func activeRingsHold(_ floats: Int) -> Bool {
        slots.list(into: inputs)
        return inputs.mostFloatsWaiting >= floats
    }

    /// Frames everything the rings hold; returns whether it took any audio.
    @discardableResult
    private func drain() -> Bool {
        var progressed = false
        while !thread.isStopping {
            if gapPending.exchange(false, ordering: .acquiringAndReleasing) {
                // The sample clock moves on by the outage; the next frame is flagged.
                let outage = lastChunkEndNs.map { MonotonicClock.nowNs() &- $0 } ?? 0
                pipeline.markDiscontinuity(
                    skippedSamples: AudioFormat.wholeFrameSamples(inNanoseconds: outage))
                mixer.forgetLateAudio()
            }
            slots.list(into: inputs)
            // Whole samples of the pipeline's channels, so every chunk starts on one.
            let chunk = UnsafeMutableBufferPointer(rebasing: self.chunk[0..<(self.chunk.count - self.chunk.count % mixer.channels)])
            var (count, sources) = mixer.pull(inputs, into: chunk)
            if inputs.count == 0 {
                // No capture: the host's PCM alone, as fast as it comes.
                count = mixer.spread(hostRing, into: chunk)
                sources = count > 0 ? .host : AudioFrameHeader.Flags()  // (an array literal would allocate in a debug build)
            } else if count > 0,
                mixer.overlay(hostRing, onto: UnsafeMutableBufferPointer(rebasing: chunk[0..<count]))
            {
                sources.insert(.host)
            }
            guard count > 0 else { return progressed }
            progressed = true
            settings.apply(to: pipeline)
            // Audio still waiting in the rings was captured after this chunk ended.
            let waiting = inputs.mostFloatsWaiting
            let laterNs = MonotonicClock.nanoseconds(ofSamples: UInt64(waiting / mixer.channels))
            let chunkEndNs = MonotonicClock.nowNs() &- laterNs
            lastChunkEndNs = chunkEndNs
            pipeline.process(
                UnsafeBufferPointer(rebasing: chunk[0..<count]), sources: sources, endTimeNs: chunkEndNs
            ) { frame in
                delivery.queue.push(frame)
            }
            stats.publish(pipeline.counters, mixer: mixer)
        }
        return progressed
    }

}
