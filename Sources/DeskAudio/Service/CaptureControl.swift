import Glibc

/// The control state of one capture and every change to it: the host's choices, the sources
/// and their streams, the pipeline and the worker. Reachable only through the service's
/// `LockOwned<CaptureControl>`, so every method here runs with that lock held; the
/// capture's real-time threads never take it (they read the lock-free parts: slots, rings,
/// delivery, stats).
final class CaptureControl {
    /// What the host chose; applied by the calls that change it.
    var choices = CaptureChoices()
    private let parts: CaptureParts
    private let supervisor: SourceSupervisor
    // The sources capturing, or waiting to be reopened.
    private var sources: [CaptureSource] = []
    private var worker: CaptureWorker?
    // The pipeline and the mixer, which every worker in turn works on.
    private let work = LockOwned(CaptureWork())
    private var stoppedAtNs: UInt64?

    /// A stopped capture over `parts`, whose failed streams `supervisor` reopens.
    init(parts: CaptureParts, supervisor: SourceSupervisor) {
        self.parts = parts
        self.supervisor = supervisor
    }

    // MARK: Starting and stopping sources

    /// Starts the sources of `wanted` that are not running and stops the others (none: stops
    /// everything). On failure, nothing this call started is left running.
    func enable(_ wanted: [CaptureSource.Role]) throws(DeskAudioError) {
        let starting = wanted.filter { role in !sources.contains { $0.role == role } }
        if !wanted.isEmpty { parts.delivery.resume() }  // undoes a stop asked for inside the handler
        if !starting.isEmpty {
            let backend = try parts.backendChoice.current()
            try prepareLayout(on: backend)  // (only while stopped)
            _ = try runningWorker()
            var started: [CaptureSource] = []
            do throws(DeskAudioError) {
                for role in starting {
                    let source = try addSource(role)
                    started.append(source)
                    try open(source, backend: backend)
                }
            } catch {
                parts.notices.log(.error, "capture did not start: \(error.message)")
                for source in started { remove(source) }
                if sources.isEmpty { stopAll() }
                throw error
            }
        }
        for source in sources where !wanted.contains(source.role) { remove(source) }
        if sources.isEmpty { stopAll() }
    }

    /// The running source of `role`, if any, stopped, changed by `change` and started again
    /// (true; false with none running); if that fails it is removed (and capture stopped if
    /// it was the last source) and this throws.
    @discardableResult
    func reopen(_ role: CaptureSource.Role, _ change: (CaptureSource) -> Void) throws(DeskAudioError) -> Bool {
        guard let source = sources.first(where: { $0.role == role }) else { return false }
        close(source)
        change(source)
        do throws(DeskAudioError) {
            try open(source, backend: parts.backendChoice.inUse.value)
        } catch {
            remove(source)
            if sources.isEmpty { stopAll() }
            throw error
        }
        return true
    }

    /// Stops every source, the worker and the supervisor, and drops queued host audio.
    func stopAll() {
        supervisor.stop()
        for source in sources { remove(source) }
        worker?.stop()
        if worker != nil { stoppedAtNs = parts.clock.nowNs() }
        parts.hostInput.reset()
        worker = nil
        parts.backendChoice.inUse.value = nil
    }

    // MARK: The pipeline and the worker

    /// True while the worker runs (capture, or host audio alone).
    var isRunning: Bool { worker != nil }

    /// Stepped (`CaptureDriving.stepped`): the worker's round, on the calling thread.
    func step() { worker?.step() }

    /// The layout the pipeline encodes (stereo before there is one).
    var preparedLayout: ChannelLayout { work.withLock { $0.pipeline?.encoder.layout } ?? .stereo }

    /// The layout of the frames: the running capture's, or what the next start uses when the
    /// choice is a layout.
    var channelLayout: ChannelLayout {
        if worker == nil, case .layout(let layout) = choices.channels { return layout }
        return preparedLayout
    }

    /// Where the worker also puts each mixed chunk (`AudioService.setCapturedAudioTap`).
    func setCapturedAudioTap(_ ring: AudioChunkRing?) {
        work.withLock { $0.capturedAudio = ring }
    }

    /// While stopped, the pipeline's encoder in the layout chosen (the sink's own read from
    /// `backend`'s server: the sink app audio records, or the default).
    func prepareLayout(on backend: AudioBackend?) throws(DeskAudioError) {
        guard worker == nil else { return }
        var layout = ChannelLayout.stereo
        switch choices.channels {
        case .layout(let chosen):
            layout = chosen
        case .sinkLayout:
            let sinks = try parts.backends.run(on: backend) { backend throws(DeskAudioError) in try backend.devices() }
                .filter { $0.kind == .sink }
            let sink = choices.devices[.app].flatMap { name in sinks.first { $0.name == name } } ?? sinks.first { $0.isDefault }
            layout = ChannelChoice.layout(forSinkChannels: sink?.channels ?? 0)
            parts.notices.log(
                .info, "channels: \(layout.channels), the layout of \(sink?.name ?? "no default sink") (\(sink?.channels ?? 0) channels)")
        }
        let bitrate = parts.settings.useDefaults(for: layout)
        let streams = choices.surroundStreams.applied(to: layout)
        let settings = parts.settings
        try work.withLock { (work) throws(DeskAudioError) in
            let pipeline = try work.preparedPipeline(settings)
            guard pipeline.encoder.layout != layout || pipeline.encoder.surroundStreams != streams else { return }
            pipeline.replaceEncoder(
                try OpusFrameEncoder(
                    layout: layout, bitrate: bitrate, complexity: settings.requestedComplexity, surroundStreams: streams))
        }
    }

    /// What the pipeline's encoder (made with the current settings if there is none yet)
    /// gives `body`.
    func preparedEncoder<Result: Sendable>(_ body: (OpusFrameEncoder) -> Result) throws(DeskAudioError) -> Result {
        let settings = parts.settings
        return try work.withLock { (work) throws(DeskAudioError) in body(try work.preparedPipeline(settings).encoder) }
    }

    /// The worker, started with the supervisor (after a pause, the pipeline marks the gap).
    @discardableResult
    func runningWorker() throws(DeskAudioError) -> CaptureWorker {
        if let worker { return worker }
        let paused = stoppedAtNs.map { AudioFormat.samples(inNanoseconds: parts.clock.nowNs() &- $0) }
        let settings = parts.settings
        try work.withLock { (work) throws(DeskAudioError) in
            let pipeline = try work.preparedPipeline(settings)
            if let paused { pipeline.markDiscontinuity(skippedSamples: paused) }
        }
        let worker = CaptureWorker(
            slots: parts.slots, hostRing: parts.hostInput.ring, wake: parts.wake, work: work, delivery: parts.delivery,
            settings: parts.settings, stats: parts.statsBoard, clock: parts.clock, driving: parts.driving)
        try worker.start()
        do throws(DeskAudioError) {
            if parts.driving == .threads { try supervisor.start() }
        } catch {
            worker.stop()
            throw error
        }
        self.worker = worker
        return worker
    }

    // MARK: Keeping streams alive (the supervisor's check)

    /// Reopens each stream the server dropped, or that is no longer fed (StallWatch), on any
    /// backend the choice allows, with back-off; the worker flags the gap.
    func reopenFailedSources() {
        for source in sources {
            logSkips(source)
            reopenIfFailed(source)
        }
    }

    /// Tells the log of audio the server moved past without the source's stream since the
    /// last look (SourceFeed.writeSkipped).
    private func logSkips(_ source: CaptureSource) {
        let skipped = source.feed.skippedSamples
        guard skipped > source.skipsLogged else { return }
        let ms = Double(skipped - source.skipsLogged) * 1000 / Double(AudioFormat.sampleRate)
        source.skipsLogged = skipped
        parts.notices.log(
            .warning,
            "\(source.role.name): the server moved on without this process for \(ms.rounded()) ms (its threads were "
                + "not run in time): silence stands in its place (the audio of those cycles is lost, or, when the "
                + "whole graph ran late, was never played)")
    }

    private func reopenIfFailed(_ source: CaptureSource) {
        guard let stream = source.stream, let worker else { return }
        let now = parts.clock.nowNs()
        let notices = parts.notices
        if !stream.hasFailed && !source.needsReopen {
            let waitedMs = source.stall.patienceNs / MonotonicClock.nanosecondsPerMillisecond  // before isStalled moves it on
            guard source.stall.isStalled(count: source.feed.writeCount, at: now) else { return }
            let why =
                "no audio for \(waitedMs) ms though the stream is connected (the session manager restarted, or it was unlinked)"
            notices.post(.stalled, "\(source.role.name): \(why)")
            let how = source.stall.stallsInARow >= 2 ? "reopening, linked by the library where it can" : "reopening"
            notices.log(.warning, "\(source.role.name): \(why): \(how)")
            source.needsReopen = true
        } else if !source.retry.isRetrying && !source.needsReopen {
            notices.post(.disconnected, "\(source.role.name): the audio server dropped the stream")
            notices.log(.warning, "\(source.role.name): stream lost, reconnecting")
        }
        guard source.retry.isDue(at: now) else { return }
        parts.slots.deactivate(source.slot)
        stream.stop()
        do throws(DeskAudioError) {
            try open(source, backend: parts.backendChoice.allowed())
            worker.gapPending.store(true, ordering: .releasing)
            source.retry.reset()
            source.needsReopen = false
        } catch {
            notices.log(.debug, "\(source.role.name): reconnect failed: \(error.message)")
            source.retry.failed(at: parts.clock.nowNs())  // the stopped stream stays, to be retried
        }
    }

    // MARK: Sources

    // A new source of `role` in a free slot, on the device and selection chosen for it,
    // listed (not yet capturing).
    private func addSource(_ role: CaptureSource.Role) throws(DeskAudioError) -> CaptureSource {
        let feeds = parts.slots.feeds
        guard let slot = (0..<feeds.count).first(where: { slot in !sources.contains { $0.slot == slot } }) else {
            throw .outOfResources("a capture holds at most \(feeds.count) sources")
        }
        let source = CaptureSource(
            role: role, device: choices.devices[role], selection: role == .app ? choices.appSelection : nil,
            slot: slot, feed: feeds[slot])
        sources.append(source)
        return source
    }

    // The slot is inactive, so nobody reads its ring: empty it (stale audio from an earlier
    // run must not leak in), start the stream, then let the worker mix it.
    private func open(_ source: CaptureSource, backend: AudioBackend?) throws(DeskAudioError) {
        let feed = source.feed
        let layout = preparedLayout
        feed.restart(frameFlags: source.role.frameFlags, channels: layout.channels)
        let target = source.target
        let settings = parts.settings
        // Stalled again right after a reopen: the session manager is not linking the stream.
        let options = StreamOptions(
            linkingItself: source.stall.stallsInARow >= 2,
            ensuresSink: source.role == .app && parts.ensuresSink.withLock { $0 },
            periodSamples: min(max(settings.frameDuration.samples, FrameDuration.ms5.samples), FrameDuration.ms10.samples),
            pipeWireQuantum: choices.pipeWireQuantum,
            layout: layout)
        let wake = parts.wake
        let (stream, kind) = try parts.backends.run(on: backend) { backend throws(DeskAudioError) in
            (try backend.openStream(target, into: feed, wake: wake, options: options), backend.kind)
        }
        parts.backendChoice.inUse.value = kind
        source.stream = stream
        source.stall.restart(count: feed.writeCount, at: parts.clock.nowNs())
        feed.isCapturing = true
        parts.slots.activate(source.slot)
        parts.notices.post(.connected, "\(feed.name): \(target) via \(kind.rawValue)")
        parts.notices.log(.info, "\(feed.name) capturing \(target) via \(kind.rawValue)")
    }

    // Stops a source's stream (the worker stops reading its ring first); the source stays listed.
    private func close(_ source: CaptureSource) {
        parts.slots.deactivate(source.slot)
        if source.stream != nil { parts.notices.log(.info, "\(source.role.name) stopped") }
        source.stream?.stop()
        source.stream = nil
        source.feed.isCapturing = false
    }

    // Stops a source and takes it off the list.
    private func remove(_ source: CaptureSource) {
        close(source)
        sources.removeAll { $0 === source }
    }
}
