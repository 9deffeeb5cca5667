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
    private var lastChunkEndNs: UInt64?
    /// Set at a break in the audio: when the audio before it ended (0: no audio yet).
    private var gapSince: UInt64?
    // The last chunk stamped by a server clock, for chunks that cannot be (see chunkEnd).
    private var lastServerClock: CaptureClock?
    // The mapping the last chunk was stamped on (its relocks and origin): a chunk on another
    // one steps the timeline.
    private var lastMapping: (relocks: Int, origin: CaptureClock.Origin)?
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
        lastServerClock = nil
        lastMapping = nil
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
                // The audio before the break is over: the next chunk follows a gap, which
                // ends where that chunk's audio begins (see below). A second break before
                // any audio (a stall, then the server's restart) is the same gap (R-RESTART-GAP).
                if gapSince == nil { gapSince = lastChunkEndNs ?? 0 }
                lastServerClock = nil
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
            var end = chunkEnd(timing: timing, readBefore: timingReadBefore, floats: count)
            // A break, a relock of the server's clock, or another clock taking over: the
            // timeline steps at the next frame (its flag tells the host). A break or another
            // clock starts a line, which locks; a relock moves a running one.
            let lineStarted = gapSince != nil || (lastMapping.map { $0.origin != end.origin } ?? false)
            let timeStepped = lineStarted || (lastMapping.map { $0.relocks != end.relocks } ?? false)
            lastMapping = (end.relocks, end.origin)
            if let since = gapSince {
                // The sample clock moves on by the outage, up to this chunk's first sample
                // (its time by the new stream's clock), and the next frame is flagged.
                // (Only the sample clock moves: the last mapping was dropped at the break, so
                // the chunk's time does not depend on it.)
                gapSince = nil
                let startNs = end.timeNs &- UInt64(Double(count / pipeline.channels) * end.nanosecondsPerSample)
                let outage = since > 0 && startNs > since ? startNs - since : 0
                pipeline.markDiscontinuity(skippedSamples: AudioFormat.samples(inNanoseconds: outage))
                end.sampleClock = sampleClock(afterChunkOf: count)
            }
            lastChunkEndNs = end.timeNs
            pipeline.process(
                UnsafeBufferPointer(rebasing: chunk[0..<count]), sources: sources, endTimeNs: end.timeNs,
                nanosecondsPerSample: end.nanosecondsPerSample, timeStepped: timeStepped, lineStarted: lineStarted,
                onServerClock: end.origin != .arrival
            ) { frame in
                delivery.queue.push(frame)
            }
            stats.publish(pipeline.counters, mixer: mixer)
            if case .serverClock = end.origin { lastServerClock = end }
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

    // Where the sample after a chunk of `floats` stands (the mapping published for it): on the
    // timing source's server clock when the whole chunk is that source's audio (it was not
    // filled with silence for it) and its server has reported; otherwise along the last such
    // mapping; before any, estimated from now, less the audio still waiting in the rings
    // (captured after this chunk ended). Call before the chunk is processed.
    private func chunkEnd(timing: Int?, readBefore: Int, floats: Int) -> CaptureClock {
        let endSample = sampleClock(afterChunkOf: floats)
        if let timing {
            let ring = inputs.ring(timing)
            let readAfter = ring.readFloats
            if readAfter - readBefore == floats,
                let reading = slots.clock(ofSlot: inputs.slot(timing)).takeUnretainedValue().reading
            {
                let endNs = reading.line.timeNs(ofPosition: Int64(readAfter / ring.channels))
                if endNs > 0 {
                    return CaptureClock(
                        sampleClock: endSample, timeNs: UInt64(endNs),
                        nanosecondsPerSample: reading.line.nanosecondsPerSample, rateErrorPPM: reading.rateErrorPPM,
                        jitterNs: reading.jitterNs, relocks: reading.relocks,
                        origin: .serverClock(inputs.flags(timing)))
                }
            }
        }
        // A chunk the server clock cannot place (the mix filled it with silence for the
        // timed source) goes on along the last mapping, so that capture times never jump.
        if var last = lastServerClock {
            last.timeNs = last.timeNs(ofSampleClock: endSample)
            last.sampleClock = endSample
            return last
        }
        let waiting = inputs.mostFloatsWaiting
        let laterNs = MonotonicClock.nanoseconds(ofSamples: UInt64(waiting / mixer.channels))
        return CaptureClock(
            sampleClock: endSample, timeNs: clock.nowNs() &- laterNs,
            nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample, rateErrorPPM: 0, jitterNs: 0, relocks: 0,
            origin: .arrival)
    }

    /// The sample clock just after a chunk of `floats` that is still to be processed.
    private func sampleClock(afterChunkOf floats: Int) -> UInt64 {
        pipeline.samplesProcessed + UInt64(floats / pipeline.channels)
    }
}
