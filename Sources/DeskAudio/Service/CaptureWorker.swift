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
    private let clock: LibraryClock
    private let driving: CaptureDriving
    /// Set when a source was reopened after a failure: the next audio follows a gap.
    let gapPending = Atomic<Bool>(false)
    // Where each chunk stands on the timeline.
    private var stamper = ChunkStamper()
    private let thread: StoppableThread
    private let chunk: UnsafeMutableBufferPointer<Float>

    init(
        slots: SourceSlots, hostRing: SampleRing, wake: WakeSignal,
        pipeline: FramePipeline, delivery: FrameDelivery, settings: EncoderSettings, mixer: SourceMixer,
        stats: StatsBoard, clock: LibraryClock, driving: CaptureDriving
    ) {
        self.slots = slots
        self.hostRing = hostRing
        self.wake = wake
        self.pipeline = pipeline
        self.delivery = delivery
        self.settings = settings
        self.mixer = mixer
        self.stats = stats
        self.clock = clock
        self.driving = driving
        thread = StoppableThread(wake: wake)
        chunk = .zeroed(4096)
    }

    deinit { chunk.deallocate() }

    /// Starts the thread, and the delivery thread behind it (stepped: neither; `step` runs both).
    func start() throws(DeskAudioError) {
        mixer.channels = pipeline.channels
        mixer.forgetLateAudio()  // a new run: nothing is owed from the last one
        stamper.startRun()
        if driving == .stepped {
            delivery.startStepped()
            return
        }
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
        guard thread.isRunning || driving == .stepped else { return }
        thread.stop()
        delivery.stop()
    }

    /// Stepped: frames everything the rings hold and hands the frames to the host, on the
    /// calling thread.
    func step() {
        precondition(driving == .stepped, "the worker's thread drains")
        drain()
        delivery.deliverQueued()
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
                stamper.breakInAudio()
                mixer.forgetLateAudio()
            }
            slots.list(into: inputs)
            // Whole samples of the pipeline's channels, so every chunk starts on one.
            let chunk = UnsafeMutableBufferPointer(rebasing: self.chunk[0..<(self.chunk.count - self.chunk.count % mixer.channels)])
            let timing = timingInput()
            let timingReadBefore = timing.map { inputs.ring($0).readFloats } ?? 0
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
            var stamp = stamper.stamp(
                samples: count / pipeline.channels, endSample: sampleClock(afterChunkOf: count),
                server: serverReading(timing: timing, readBefore: timingReadBefore, floats: count),
                nowNs: clock.nowNs(), waitingSamples: inputs.mostFloatsWaiting / mixer.channels)
            if let outage = stamp.outageSamples {
                pipeline.markDiscontinuity(skippedSamples: outage)
                stamp.end.sampleClock = sampleClock(afterChunkOf: count)
            }
            let end = stamp.end
            stamper.framed(end)
            pipeline.process(
                UnsafeBufferPointer(rebasing: chunk[0..<count]), sources: sources, endTimeNs: end.timeNs,
                nanosecondsPerSample: end.nanosecondsPerSample, timeStepped: stamp.timeStepped,
                lineStarted: stamp.lineStarted,
                onServerClock: end.origin != .arrival
            ) { frame in
                delivery.queue.push(frame)
            }
            stats.publish(pipeline.counters, mixer: mixer)
            stats.publishClock(end)
        }
        return progressed
    }

    // The input whose clock stamps frames: app audio when it is captured, else the first
    // source; nil when only the host's PCM plays.
    private func timingInput() -> Int? {
        guard inputs.count > 0 else { return nil }
        for index in 0..<inputs.count where inputs.flags(index).contains(.app) { return index }
        return 0
    }

    // The timing source's line for a chunk of `floats` just pulled, and the source's stream
    // position after it, when the whole chunk is that source's audio (it was not filled with
    // silence for it) and its server has reported; nil otherwise.
    private func serverReading(timing: Int?, readBefore: Int, floats: Int)
        -> (reading: StreamClock.Reading, position: Int64, flags: AudioFrameHeader.Flags)?
    {
        guard let timing else { return nil }
        let ring = inputs.ring(timing)
        let readAfter = ring.readFloats
        guard readAfter - readBefore == floats, let reading = slots.clock(ofSlot: inputs.slot(timing)).takeUnretainedValue().reading
        else { return nil }
        return (reading, Int64(readAfter / ring.channels), inputs.flags(timing))
    }

    /// The sample clock just after a chunk of `floats` that is still to be processed.
    private func sampleClock(afterChunkOf floats: Int) -> UInt64 {
        pipeline.samplesProcessed + UInt64(floats / pipeline.channels)
    }
}
