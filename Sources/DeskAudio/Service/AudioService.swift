import Glibc
import Synchronization

/// The capture service a host drives: which sources are on, through which backend, where
/// frames go, and the encoder settings. Each service is independent (its own streams,
/// worker, sequence numbers and settings), so a process may run several. Every method may
/// be called from any thread. While it captures, its threads hold it: stop it
/// (`enable(mic: false, app: false)`) before letting it go.
public final class AudioService: @unchecked Sendable {
    /// Receives each AudioFrame's bytes on the library's delivery thread, valid only during the call.
    public typealias FrameHandler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Encoded frames that wait for a slow frame handler before the oldest is dropped.
    public static let frameQueueCapacity = FrameQueue.capacity

    /// Encoder settings; changes apply at the next frame.
    public let settings = EncoderSettings()
    /// Events and log messages for the host.
    public let notices = NoticeBoard()

    private let backends: BackendSet
    private let control: UnsafeMutablePointer<pthread_mutex_t>
    private let delivery: FrameDelivery
    private let slots: SourceSlots
    private let mixer = SourceMixer()
    private let hostInput = HostPCMInput()
    private let statsBoard = StatsBoard()
    private let wake = WakeSignal()
    private var pipeline: FramePipeline?
    private var worker: CaptureWorker?
    private var stoppedAtNs: UInt64?
    // Control lock held: the sources capturing (or waiting to be reopened), and the devices
    // asked for by role (none: the default), kept while a source is off.
    private var sources: [CaptureSource] = []
    private var chosenDevices: [CaptureSource.Role: String] = [:]
    private var chosenApps: AppSelection?
    private var mutesHost = false
    private var channelChoice = ChannelChoice.layout(.stereo)
    private var surroundStreams = OpusFrameEncoder.SurroundStreams.coupled
    private var measuresAppLevels = false
    // Set by a stop asked for from inside the frame handler, cleared by any later start or
    // stop: the stop thread stops only if it is still set. Atomic: the handler's thread
    // must never wait for the control lock (a stop holding it waits for that thread).
    private let stopPending = Atomic<Bool>(false)
    // Read without the control lock (from the frame handler too); written with it held.
    private let requested = BackendSlot()
    // Whether app audio creates a virtual sink on a server that has none.
    private let ensuresSink = LockedValue(false)
    private let inUse = BackendSlot()
    // Reopens streams whose server went away; never waits for the control lock.
    private var supervisor: pthread_t?
    private let supervisorStop = Atomic<Bool>(false)
    private let supervisorWake = WakeSignal()

    /// A stopped service with default settings, on the real audio servers.
    public convenience init() {
        self.init(backends: .system)
    }

    /// A stopped service with default settings on `backends` (the tests give fakes).
    init(backends: BackendSet) {
        self.backends = backends
        slots = SourceSlots(notices: notices)
        delivery = FrameDelivery(stats: statsBoard)
        control = .allocate(capacity: 1)
        pthread_mutex_init(control, nil)
    }

    deinit {
        stopAll()
        notices.close()
        pthread_mutex_destroy(control)
        control.deallocate()
    }

    /// Starts, changes or stops capture to match (false, false stops). Idempotent.
    /// Sources already running keep running through a change. On failure, nothing that
    /// this call started is left running. From inside the frame handler only a stop is
    /// allowed: the handler call in progress is the last one, and the streams stop just
    /// after it returns; a start or change there throws `wrongThread`.
    public func enable(mic: Bool, app: Bool) throws(DeskAudioError) {
        if delivery.isDeliveringThread {
            guard !mic && !app else {
                throw .wrongThread("enable_audio can only stop capture from inside the audio callback")
            }
            return try stopFromHandler()
        }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        stopPending.store(false, ordering: .releasing)
        var wanted: [CaptureSource.Role] = []
        if app { wanted.append(.app) }
        if mic { wanted.append(.mic) }
        let starting = wanted.filter { role in !sources.contains { $0.role == role } }
        if !wanted.isEmpty { delivery.resume() }  // undoes a stop asked for inside the handler
        if !starting.isEmpty {
            let backend = try chosenBackend()
            if worker == nil { try prepareLayout(on: backend) }
            _ = try runningWorker()
            var started: [CaptureSource] = []
            do throws(DeskAudioError) {
                for role in starting {
                    let source = try addSource(role)
                    started.append(source)
                    try open(source, backend: backend)
                }
            } catch {
                notices.log(.error, "capture did not start: \(error.message)")
                for source in started { remove(source) }
                if sources.isEmpty { stopAll() }
                throw error
            }
        }
        for source in sources where !wanted.contains(source.role) { remove(source) }
        if sources.isEmpty { stopAll() }
    }

    /// Chooses the channels of the frames: a layout, or the default sink's own
    /// (`ChannelChoice`). Applies from the next start from stopped: a capture running now
    /// keeps its layout until it is stopped (enable(mic: false, app: false)) and started
    /// again. Unless the host set a bitrate, each start takes the layout's default bitrate.
    public func setChannels(_ choice: ChannelChoice) {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        channelChoice = choice
    }

    /// Chooses how 5.1 and 7.1 frames are split into Opus streams (`.coupled`, the default,
    /// or `.discrete`). Applies from the next start from stopped, as `setChannels` does.
    public func setSurroundStreams(_ streams: OpusFrameEncoder.SurroundStreams) {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        surroundStreams = streams
    }

    /// The channel layout of the frames: the running capture's, or what the next start
    /// uses when the choice is a layout (stereo for the sink's own until a start reads it).
    public var channelLayout: ChannelLayout {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        if worker == nil, case .layout(let layout) = channelChoice { return layout }
        return pipeline?.encoder.layout ?? .stereo
    }

    /// The channel mapping the frames carry, with their layout: the running capture's, or
    /// while stopped the one the next start uses, prepared now (the sink's own layout read
    /// from the server). For a writer that must know them before the first frame (an Ogg
    /// file's OpusHead). Blocks up to 3 s for the server.
    public func prepareChannels() throws(DeskAudioError) -> (layout: ChannelLayout, mapping: OpusChannelMapping) {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        if worker == nil { try prepareLayout(on: try chosenBackend()) }
        let encoder = try preparedPipeline().encoder
        return (encoder.layout, encoder.mapping)
    }

    // Control lock held, stopped: the pipeline's encoder in the layout chosen (the sink's
    // own read from `backend`'s server: the sink app audio records, or the default).
    private func prepareLayout(on backend: AudioBackend?) throws(DeskAudioError) {
        var layout = ChannelLayout.stereo
        switch channelChoice {
        case .layout(let chosen):
            layout = chosen
        case .sinkLayout:
            let sinks = try backends.run(on: backend) { backend throws(DeskAudioError) in try backend.devices() }
                .filter { $0.kind == .sink }
            let sink = chosenDevices[.app].flatMap { name in sinks.first { $0.name == name } } ?? sinks.first { $0.isDefault }
            layout = ChannelChoice.layout(forSinkChannels: sink?.channels ?? 0)
            notices.log(.info, "channels: \(layout.channels), the layout of \(sink?.name ?? "no default sink") (\(sink?.channels ?? 0) channels)")
        }
        let bitrate = settings.useDefaults(for: layout)
        let pipeline = try preparedPipeline()
        let streams = surroundStreams.applied(to: layout)
        guard pipeline.encoder.layout != layout || pipeline.encoder.surroundStreams != streams else { return }
        pipeline.replaceEncoder(
            try OpusFrameEncoder(
                layout: layout, bitrate: bitrate, complexity: settings.requestedComplexity, surroundStreams: streams))
    }

    /// Takes interleaved PCM the host got elsewhere (HostPCMInput.push: any of its formats,
    /// 1 or 2 channels, 8–96 kHz), mixed with captured audio, or framed alone while nothing
    /// is captured; the library's worker is started for it if capture is off. Returns the
    /// input frames taken (fewer when 1 s is already queued). enable(mic: false, app: false)
    /// stops the worker and drops what is queued.
    public func pushPCM(
        _ bytes: UnsafeRawBufferPointer, format: HostPCMInput.SampleFormat, channels: Int32, rate: Int32
    ) throws(DeskAudioError) -> Int {
        let taken = try hostInput.push(bytes, format: format, channels: channels, rate: rate)
        // Never waits for a start or stop in progress: that one decides whether the worker runs.
        if taken > 0 && !delivery.isDeliveringThread && pthread_mutex_trylock(control) == 0 {
            defer { pthread_mutex_unlock(control) }
            do throws(DeskAudioError) {
                _ = try runningWorker()
            } catch {
                // The audio is taken and stays queued (the next push or start frames it):
                // the host must not be told otherwise, or it would push it twice.
                notices.post(.error, "host audio: the library's worker did not start: \(error.message)")
            }
        }
        wake.signal()
        return taken
    }

    /// The capture devices of the server the backend choice picks (the one in use while
    /// capturing): every sink, whose monitor is app audio, and every source that is not a
    /// monitor. Blocks up to 3 s for the server.
    public func devices() throws(DeskAudioError) -> [CaptureDevice] {
        try devicesAndBackend().devices
    }

    /// The capture devices, as `devices()` lists them, and the backend that answered.
    public func devicesAndBackend() throws(DeskAudioError) -> (devices: [CaptureDevice], backend: AudioBackend) {
        try backends.run(on: try chosenBackend()) { backend throws(DeskAudioError) in
            (try backend.devices(), backend.kind)
        }
    }

    /// Captures app audio from the monitor of the sink `name` (nil: the default sink,
    /// followed when it changes), or the microphone from the source `name` (nil: the
    /// default source). The name is checked against the server now. A source that is
    /// capturing moves to the device at once; if that fails, it stops and this throws.
    /// Not callable from inside the frame handler.
    public func setDevice(_ name: String?, forMic mic: Bool) throws(DeskAudioError) {
        if delivery.isDeliveringThread {
            throw .wrongThread("a capture device cannot be chosen from inside the audio callback")
        }
        let role: CaptureSource.Role = mic ? .mic : .app
        if let name {
            let kind: CaptureDevice.Kind = mic ? .source : .sink
            guard try devices().contains(where: { $0.name == name && $0.kind == kind }) else {
                throw .noDevice("the audio server has no \(mic ? "source" : "sink") named \(name)")
            }
        }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        chosenDevices[role] = name
        if try reopen(role, { $0.device = name }) {
            notices.post(.deviceChanged, "\(role.name): \(name ?? "the default")")
        }
    }

    /// Records, as app audio, what the applications `selection` picks play instead of the
    /// default sink's monitor (nil: the monitor again, or the device chosen with setDevice).
    /// App audio that is capturing switches at once; if that fails, it stops and this throws.
    /// Not callable from inside the frame handler.
    public func setApps(_ selection: AppSelection?) throws(DeskAudioError) {
        try changeAppSelection("applications cannot be chosen") { chosenApps = selection }
    }

    /// While `mute` is true, what app audio records reaches the viewer but not the machine's
    /// speakers: the recorded streams play into a silent sink of the library's, never by
    /// changing the default sink. Without a selection (setApps(nil)) app audio then records
    /// every application but this process, wherever it plays, instead of a sink's monitor.
    /// False gives every stream back the device it played to (unless the selection asks for
    /// the mute itself: `AppSelection.mutesHost`). App audio that is capturing
    /// switches at once; if that fails, it stops and this throws. On PulseAudio's backend the
    /// sink is a loaded module that a killed process leaves behind until the next capture
    /// starts there. Not callable from inside the frame handler.
    public func setMuteHost(_ mute: Bool) throws(DeskAudioError) {
        try changeAppSelection("the host cannot be muted") { mutesHost = mute }
    }

    /// While `measure` is true, app audio that records a selection of applications (setApps)
    /// measures each recorded stream's level on its own, read with `appLevels()`. On
    /// PipeWire's native backend that is one more stream per recorded application; through
    /// the PulseAudio API the record streams are there anyway. Without a selection there
    /// are no levels per application. App audio that is capturing switches at once; if that
    /// fails, it stops and this throws. Not callable from inside the frame handler.
    public func setMeasuresAppLevels(_ measure: Bool) throws(DeskAudioError) {
        try changeAppSelection("app levels cannot be switched") { measuresAppLevels = measure }
    }

    /// The level of each application stream app audio records now, over the last second
    /// (empty unless setMeasuresAppLevels(true) and a selection). Takes one short lock that
    /// the audio threads never take; may be called from inside the frame handler.
    public func appLevels() -> [AppLevel] {
        slots.feeds.filter { $0.isCapturing && $0.frameFlags == .app }.flatMap(\.appLevels.levels)
    }

    // Applies `change` (to chosenApps, mutesHost or measuresAppLevels) under the control lock and switches app
    // audio that is capturing; `refusal` starts the wrong-thread message.
    private func changeAppSelection(_ refusal: String, _ change: () -> Void) throws(DeskAudioError) {
        if delivery.isDeliveringThread { throw .wrongThread("\(refusal) from inside the audio callback") }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        change()
        let effective = appSelection
        try reopen(.app) { $0.selection = effective }
    }

    // Control lock held: what app audio records, the choice of applications and the mute combined.
    private var appSelection: AppSelection? {
        guard var selection = chosenApps else { return mutesHost ? .everyApp(mutesHost: true, measuresLevels: measuresAppLevels) : nil }
        selection.mutesHost = selection.mutesHost || mutesHost
        selection.measuresLevels = selection.measuresLevels || measuresAppLevels
        return selection
    }

    /// The streams applications play now on the server the backend choice picks. Blocks up
    /// to 3 s for the server.
    public func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        try backends.run(on: try chosenBackend()) { backend throws(DeskAudioError) in try backend.playbackStreams() }
    }

    /// The state of the server that `backend` reaches (nil: the one the backend choice
    /// picks), and which backend answered. Blocks up to 3 s for the server.
    public func serverReport(on backend: AudioBackend? = nil) throws(DeskAudioError)
        -> (report: ServerReport, backend: AudioBackend)
    {
        var requested = backend
        if requested == nil { requested = try chosenBackend() }
        return try backends.run(on: requested) { backend throws(DeskAudioError) in
            (try backend.serverReport(), backend.kind)
        }
    }

    // Control lock held. The running source of `role`, if any, stopped, changed by `change`
    // and started again (true; false with none running); if that fails it is removed (and
    // capture stopped if it was the last source) and this throws.
    @discardableResult
    private func reopen(_ role: CaptureSource.Role, _ change: (CaptureSource) -> Void) throws(DeskAudioError)
        -> Bool
    {
        guard let source = sources.first(where: { $0.role == role }) else { return false }
        close(source)
        change(source)
        do throws(DeskAudioError) {
            try open(source, backend: inUse.value)
        } catch {
            remove(source)
            if sources.isEmpty { stopAll() }
            throw error
        }
        return true
    }

    /// While `ensure` is true, app audio on a server with no sink at all (a machine with no
    /// sound card) creates a virtual sink for as long as it captures, so applications have
    /// somewhere to play and the viewer hears them: on PipeWire a node of the library's
    /// connection (gone with it, however the process ends); through the PulseAudio API a
    /// loaded module-null-sink, unloaded on stop, or by the next capture start on that server
    /// if the process was killed. Applies from the next start of app audio.
    public func setEnsuresSink(_ ensure: Bool) {
        ensuresSink.withLock { $0 = ensure }
    }

    /// The backend asked for with setBackend (nil: automatic).
    public var requestedBackend: AudioBackend? { requested.value }

    /// The backend capture uses now, nil while stopped.
    public var activeBackend: AudioBackend? { inUse.value }

    /// Counts and measurements so far. Takes no lock; may be called from inside the
    /// frame handler.
    public func stats() -> CaptureStats {
        var stats = CaptureStats()
        statsBoard.read(into: &stats)
        // Samples per channel, each ring's floats over its own channel count (6 for 5.1).
        let droppedSamples = slots.feeds.reduce(0) { $0 + $1.ring.droppedFloats / $1.ring.channels }
        stats.framesDroppedOverflow = UInt64(droppedSamples) / UInt64(AudioFormat.frameSamples)
        stats.framesDroppedSlowCallback = delivery.queue.droppedFrames
        stats.bitrate = settings.requestedBitrate
        stats.backend = inUse.value
        for feed in slots.feeds where feed.isCapturing {
            if feed.frameFlags == .app { stats.app = level(of: feed) }
            if feed.frameFlags == .mic { stats.mic = level(of: feed) }
        }
        return stats
    }

    private func level(of feed: SourceFeed) -> CaptureStats.SourceLevel {
        CaptureStats.SourceLevel(
            peakDBFS: LevelMeter.dBFS(feed.level.peak), rmsDBFS: LevelMeter.dBFS(feed.level.rms),
            serverLatencyNs: feed.serverLatencyNs)
    }

    /// Chooses the backend for the next start: a backend, or nil for automatic (PipeWire
    /// when its daemon answers, else PulseAudio). Overrides DESKAUDIO_BACKEND.
    public func setBackend(_ backend: AudioBackend?) {
        requested.value = backend
    }

    /// Sets where frames go (nil: nowhere). Once this returns, the old handler is not
    /// called again; from inside a handler, the change applies from the next frame.
    public func setFrameHandler(_ handler: FrameHandler?) {
        delivery.setHandler(handler)
    }

    /// True on the thread that is inside this service's frame handler right now.
    public var isInsideFrameHandler: Bool { delivery.isDeliveringThread }

    /// Samples at 48 kHz a decoder skips at the start of a stream (Ogg Opus pre-skip)
    /// with the current encoder settings.
    public func encoderLookahead() throws(DeskAudioError) -> Int32 {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        return try preparedPipeline().encoder.lookahead
    }

    // The backend in use, else the one asked for, else DESKAUDIO_BACKEND's.
    private func chosenBackend() throws(DeskAudioError) -> AudioBackend? {
        if let backend = inUse.value ?? requested.value { return backend }
        return try AudioBackend.fromEnvironment()
    }

    // Control lock held: the layout the pipeline encodes (stereo before there is one).
    private var preparedLayout: ChannelLayout { pipeline?.encoder.layout ?? .stereo }

    private func preparedPipeline() throws(DeskAudioError) -> FramePipeline {
        if let pipeline { return pipeline }
        let encoder = try OpusFrameEncoder(
            bitrate: settings.requestedBitrate, complexity: settings.requestedComplexity)
        let created = FramePipeline(encoder: encoder)
        pipeline = created
        return created
    }

    // Frame handler thread: no more handler calls after this one; a thread of the library's
    // stops the streams once the handler has returned (it cannot be stopped from inside).
    private func stopFromHandler() throws(DeskAudioError) {
        delivery.halt()
        stopPending.store(true, ordering: .releasing)
        let stopper = try startLibraryThread(named: "deskaudio-stop") { [self] in
            pthread_mutex_lock(control)
            if stopPending.exchange(false, ordering: .acquiringAndReleasing) { stopAll() }
            pthread_mutex_unlock(control)
        }
        pthread_detach(stopper)
    }

    // Control lock held. The worker, started (after a pause, the pipeline marks the gap).
    private func runningWorker() throws(DeskAudioError) -> CaptureWorker {
        if let worker { return worker }
        let pipeline = try preparedPipeline()
        if let stoppedAtNs {
            let paused = AudioFormat.wholeFrameSamples(inNanoseconds: MonotonicClock.nowNs() &- stoppedAtNs)
            pipeline.markDiscontinuity(skippedSamples: paused)
        }
        let worker = CaptureWorker(
            slots: slots, hostRing: hostInput.ring, wake: wake, pipeline: pipeline, delivery: delivery,
            settings: settings, mixer: mixer, stats: statsBoard)
        try worker.start()
        self.worker = worker
        supervisorStop.store(false, ordering: .releasing)
        do {
            supervisor = try startLibraryThread(named: "deskaudio-watch") { [self] in supervise() }
        } catch {
            worker.stop()
            self.worker = nil
            throw error
        }
        return worker
    }

    // Supervisor thread: every 200 ms, if the control lock is free, reopen failed streams.
    private func supervise() {
        while !supervisorStop.load(ordering: .acquiring) {
            supervisorWake.wait(milliseconds: 200)
            guard pthread_mutex_trylock(control) == 0 else { continue }
            for source in sources { reopenIfFailed(source) }
            pthread_mutex_unlock(control)
        }
    }

    // Control lock held. A stream the server dropped, or one no longer fed (StallWatch), is
    // reopened (on any backend the choice allows), with back-off; the worker flags the gap.
    private func reopenIfFailed(_ source: CaptureSource) {
        guard let stream = source.stream, let worker else { return }
        let now = MonotonicClock.nowNs()
        if !stream.hasFailed && !source.needsReopen {
            let waitedMs = source.stall.patienceNs / 1_000_000
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
        slots.deactivate(source.slot)
        stream.stop()
        do throws(DeskAudioError) {
            var backend = requested.value
            if backend == nil { backend = try AudioBackend.fromEnvironment() }
            try open(source, backend: backend)
            worker.gapPending.store(true, ordering: .releasing)
            source.retry.reset()
            source.needsReopen = false
        } catch {
            notices.log(.debug, "\(source.role.name): reconnect failed: \(error.message)")
            source.retry.failed(at: MonotonicClock.nowNs())  // the stopped stream stays, to be retried
        }
    }

    // Control lock held. A new source of `role` in a free slot, on the device and selection
    // chosen for it, listed (not yet capturing).
    private func addSource(_ role: CaptureSource.Role) throws(DeskAudioError) -> CaptureSource {
        guard let slot = (0..<slots.feeds.count).first(where: { slot in !sources.contains { $0.slot == slot } })
        else {
            throw .outOfResources("a capture holds at most \(slots.feeds.count) sources")
        }
        let source = CaptureSource(
            role: role, device: chosenDevices[role], selection: role == .app ? appSelection : nil, slot: slot,
            feed: slots.feeds[slot])
        sources.append(source)
        return source
    }

    // Control lock held. The slot is inactive, so nobody reads its ring: empty it (stale
    // audio from an earlier run must not leak in), start the stream, then let the worker
    // mix it.
    private func open(_ source: CaptureSource, backend: AudioBackend?) throws(DeskAudioError) {
        let feed = source.feed
        let layout = preparedLayout
        feed.restart(name: source.role.name, frameFlags: source.role.frameFlags, channels: layout.channels)
        let target = source.target
        // Stalled again right after a reopen: the session manager is not linking the stream.
        let options = StreamOptions(
            linkingItself: source.stall.stallsInARow >= 2, ensuresSink: source.role == .app && ensuresSink.withLock { $0 },
            periodSamples: min(max(settings.frameDuration.samples, FrameDuration.ms5.samples), FrameDuration.ms10.samples),
            layout: layout)
        let (stream, kind) = try backends.run(on: backend) { backend throws(DeskAudioError) in
            (try backend.openStream(target, into: feed, wake: wake, options: options), backend.kind)
        }
        inUse.value = kind
        source.stream = stream
        source.stall.restart(count: feed.writeCount, at: MonotonicClock.nowNs())
        feed.isCapturing = true
        slots.activate(source.slot)
        notices.post(.connected, "\(feed.name): \(target) via \(kind.rawValue)")
        notices.log(.info, "\(feed.name) capturing \(target) via \(kind.rawValue)")
    }

    // Control lock held. Stops a source's stream (the worker stops reading its ring first);
    // the source stays listed.
    private func close(_ source: CaptureSource) {
        slots.deactivate(source.slot)
        if source.stream != nil { notices.log(.info, "\(source.role.name) stopped") }
        source.stream?.stop()
        source.stream = nil
        source.feed.isCapturing = false
    }

    // Control lock held. Stops a source and takes it off the list.
    private func remove(_ source: CaptureSource) {
        close(source)
        sources.removeAll { $0 === source }
    }

    // Control lock held. Stops every source, the worker and the delivery.
    private func stopAll() {
        if let supervisor {
            supervisorStop.store(true, ordering: .releasing)
            supervisorWake.signal()
            pthread_join(supervisor, nil)
            self.supervisor = nil
        }
        for source in sources { remove(source) }
        worker?.stop()
        if worker != nil { stoppedAtNs = MonotonicClock.nowNs() }
        hostInput.reset()
        worker = nil
        inUse.value = nil
    }
}
