import Glibc
import Synchronization

/// The library's own thread: waits for captured audio, mixes the active sources, runs the
/// result through the pipeline and queues each AudioFrame for the delivery thread, which
/// calls the host. Neither runs on an audio server's thread, and the host never holds up
/// this one.
final class CaptureWorker: Sendable {
    private let slots: SourceSlots
    private let hostRing: SampleRing
    private let wake: WakeSignal
    private let work: LockOwned<CaptureWork>
    private let delivery: FrameDelivery
    private let settings: EncoderSettings
    private let stats: StatsBoard
    private let clock: LibraryClock
    private let driving: CaptureDriving
    /// Set when a source was reopened after a failure: the next audio follows a gap.
    let gapPending = Atomic<Bool>(false)
    private let thread: StoppableThread

    /// A worker over `work` (its pipeline made), not yet started.
    init(
        slots: SourceSlots, hostRing: SampleRing, wake: WakeSignal, work: LockOwned<CaptureWork>,
        delivery: FrameDelivery, settings: EncoderSettings, stats: StatsBoard, clock: LibraryClock,
        driving: CaptureDriving
    ) {
        self.slots = slots
        self.hostRing = hostRing
        self.wake = wake
        self.work = work
        self.delivery = delivery
        self.settings = settings
        self.stats = stats
        self.clock = clock
        self.driving = driving
        thread = StoppableThread(wake: wake)
    }

    /// Starts the thread, and the delivery thread behind it (stepped: neither; `step` runs both).
    func start() throws(DeskAudioError) {
        work.withLock { work in
            work.mixer.channels = work.pipeline?.channels ?? AudioFormat.channels
            work.mixer.forgetLateAudio()  // a new run: nothing is owed from the last one
            work.stamper = ChunkStamper()
        }
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
        work.withLock { _ = drain($0) }
        delivery.deliverQueued()
    }

    private func run() {
        var drainAgain = false
        while !thread.isStopping {
            if !drainAgain { wake.wait(milliseconds: 100) }
            let (progressed, needed) = work.withLock { work in
                (drain(work), floatsToWaitFor(work))
            }
            // Sleep until a ring can complete the next frame (a server quantum shorter than
            // a frame would otherwise wake this thread about twice per frame); audio that
            // came in before the new threshold was set is drained without waiting.
            wake.awaitFloats(needed)
            drainAgain = progressed && work.withLock { activeRingsHold(needed, $0.inputs) }
        }
    }

    // The floats a ring must hold before a drain: what completes the next frame, or a whole
    // frame while a break is open.
    private func floatsToWaitFor(_ work: CaptureWork) -> Int {
        if work.stamper.isBreakOpen { return wholeFrameFloats(work) }
        return work.pipeline?.floatsToNextFrame ?? AudioFormat.frameFloats
    }

    // The floats of a whole frame in the rings.
    private func wholeFrameFloats(_ work: CaptureWork) -> Int {
        (work.pipeline?.frameDuration.samples ?? AudioFormat.frameSamples) * work.mixer.channels
    }

    private func activeRingsHold(_ floats: Int, _ inputs: MixerInputs) -> Bool {
        slots.list(into: inputs)
        return inputs.mostFloatsWaiting >= floats
    }

    /// Frames everything the rings hold; returns whether it took any audio.
    @discardableResult
    private func drain(_ work: CaptureWork) -> Bool {
        guard let pipeline = work.pipeline else { return false }
        let (inputs, mixer) = (work.inputs, work.mixer)
        var progressed = false
        while !thread.isStopping {
            if gapPending.exchange(false, ordering: .acquiringAndReleasing) {
                work.stamper.breakInAudio()
                mixer.forgetLateAudio()
            }
            slots.list(into: inputs)
            // After a break, the first chunk waits until it can complete a frame: that frame
            // and the outage are then both stamped on the newest mapping (R-RESTART-LINE).
            if work.stamper.isBreakOpen && inputs.count > 0 && inputs.mostFloatsWaiting < wholeFrameFloats(work) {
                return progressed
            }
            // Whole samples of the pipeline's channels, so every chunk starts on one.
            let chunk = UnsafeMutableBufferPointer(rebasing: work.chunk[0..<(work.chunk.count - work.chunk.count % mixer.channels)])
            let timing = timingInput(inputs)
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
            var stamp = work.stamper.stamp(
                samples: count / pipeline.channels, endSample: sampleClock(afterChunkOf: count, pipeline),
                server: serverReading(inputs, timing: timing, readBefore: timingReadBefore, floats: count),
                nowNs: clock.nowNs(), waitingSamples: inputs.mostFloatsWaiting / mixer.channels)
            if let outage = stamp.outageSamples {
                pipeline.markDiscontinuity(skippedSamples: outage)
                stamp.end.sampleClock = sampleClock(afterChunkOf: count, pipeline)
            }
            let end = stamp.end
            work.stamper.framed(end)
            if let tap = work.capturedAudio, mixer.channels == AudioFormat.channels {
                tap.put(UnsafeBufferPointer(rebasing: chunk[0..<count]), endTimeNs: end.timeNs &- MonotonicClock.nanoseconds(ofSamples: 1))
            }
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
    private func timingInput(_ inputs: MixerInputs) -> Int? {
        guard inputs.count > 0 else { return nil }
        for index in 0..<inputs.count where inputs.flags(index).contains(.app) { return index }
        return 0
    }

    // The timing source's line for a chunk of `floats` just pulled, and the source's stream
    // position after it, when the whole chunk is that source's audio (it was not filled with
    // silence for it) and its server has reported; nil otherwise.
    private func serverReading(_ inputs: MixerInputs, timing: Int?, readBefore: Int, floats: Int)
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
    private func sampleClock(afterChunkOf floats: Int, _ pipeline: FramePipeline) -> UInt64 {
        pipeline.samplesProcessed + UInt64(floats / pipeline.channels)
    }
}

/// What the worker works on, and the control changes while no worker runs: the pipeline
/// (made on first need, and kept across runs), the mixer (its counts run on across runs), the
/// timeline's stamper, the mixer's list of inputs and the chunk they are mixed into. Owned
/// by a `LockOwned` the control makes; the worker holds the lock while it drains.
final class CaptureWork {
    var pipeline: FramePipeline?
    let mixer = SourceMixer()
    let inputs = MixerInputs()
    var stamper = ChunkStamper()
    let chunk: UnsafeMutableBufferPointer<Float> = .zeroed(4096)
    /// Where each mixed stereo chunk goes as well, with its last sample's capture time.
    var capturedAudio: AudioChunkRing?

    deinit { chunk.deallocate() }

    /// The pipeline, made with `settings`' encoder settings if there is none yet.
    func preparedPipeline(_ settings: EncoderSettings) throws(DeskAudioError) -> FramePipeline {
        if let pipeline { return pipeline }
        let created = FramePipeline(
            encoder: try OpusFrameEncoder(bitrate: settings.requestedBitrate, complexity: settings.requestedComplexity))
        pipeline = created
        return created
    }
}
