import Glibc
import Synchronization

/// The capture service a host drives: which sources are on, through which backend, where
/// frames go, and the encoder settings. Each service is independent (its own streams,
/// worker, sequence numbers and settings), so a process may run several. Every method may
/// be called from any thread. While it captures, its threads hold it: stop it
/// (`enable(mic: false, app: false)`) before letting it go.
public final class AudioService: Sendable {
    /// Receives each AudioFrame's bytes on the library's delivery thread, valid only during the call.
    public typealias FrameHandler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Encoded frames that wait for a slow frame handler before the oldest is dropped.
    public static let frameQueueCapacity = FrameQueue.capacity

    /// Encoder settings; changes apply at the next frame.
    public let settings = EncoderSettings()
    /// Events and log messages for the host.
    public let notices: NoticeBoard

    // What the capture's threads share without the control lock.
    private let parts: CaptureParts
    // The control state; its lock is held for every start, stop and change.
    private let control: LockOwned<CaptureControl>
    // Set by a stop asked for from inside the frame handler, cleared by any later start or
    // stop: the stop thread stops only if it is still set. Atomic: the handler's thread
    // must never wait for the control lock (a stop holding it waits for that thread).
    private let stopPending = Atomic<Bool>(false)

    /// A stopped service with default settings, on the real audio servers.
    public convenience init() {
        self.init(backends: .system)
    }

    /// A stopped service with default settings on `backends` (the tests give fakes), on
    /// `clock`, its worker, delivery and supervisor run as `driving` says.
    init(backends: BackendSet, clock: LibraryClock = .system, driving: CaptureDriving = .threads) {
        notices = NoticeBoard(driving: driving)
        parts = CaptureParts(backends: backends, settings: settings, notices: notices, clock: clock, driving: driving)
        // The supervisor's check never waits for the lock: a stop holding it joins that thread.
        let box = WeakBox<LockOwned<CaptureControl>>()
        let supervisor = SourceSupervisor { _ = box.value?.tryWithLock { $0.reopenFailedSources() } }
        control = LockOwned(CaptureControl(parts: parts, supervisor: supervisor))
        box.value = control
    }

    deinit {
        control.withLock { $0.stopAll() }
        notices.close()
    }

    /// Starts, changes or stops capture to match (false, false stops). Idempotent.
    /// Sources already running keep running through a change. On failure, nothing that
    /// this call started is left running. From inside the frame handler only a stop is
    /// allowed: the handler call in progress is the last one, and the streams stop just
    /// after it returns; a start or change there throws `wrongThread`.
    public func enable(mic: Bool, app: Bool) throws(DeskAudioError) {
        if parts.delivery.isDeliveringThread {
            guard !mic && !app else {
                throw .wrongThread("enable_audio can only stop capture from inside the audio callback")
            }
            return try stopFromHandler()
        }
        var wanted: [CaptureSource.Role] = []
        if app { wanted.append(.app) }
        if mic { wanted.append(.mic) }
        try control.withLock { control throws(DeskAudioError) in
            stopPending.store(false, ordering: .releasing)
            try control.enable(wanted)
        }
    }

    /// Chooses the channels of the frames: a layout, or the default sink's own
    /// (`ChannelChoice`). Applies from the next start from stopped: a capture running now
    /// keeps its layout until it is stopped (enable(mic: false, app: false)) and started
    /// again. Unless the host set a bitrate, each start takes the layout's default bitrate.
    public func setChannels(_ choice: ChannelChoice) {
        control.withLock { $0.choices.channels = choice }
    }

    /// Chooses how 5.1 and 7.1 frames are split into Opus streams (`.coupled`, the default,
    /// or `.discrete`). Applies from the next start from stopped, as `setChannels` does.
    public func setSurroundStreams(_ streams: OpusFrameEncoder.SurroundStreams) {
        control.withLock { $0.choices.surroundStreams = streams }
    }

    /// The PipeWire quanta the host may ask for, in samples per channel at 48 kHz: PipeWire's
    /// smallest default quantum (32) to a 10 ms frame.
    public static let pipeWireQuantumRange = 32...480

    /// Has PipeWire capture streams started from now on ask the graph for a quantum of
    /// `samples` per channel (`pipeWireQuantumRange`), or, with nil (the default), for the
    /// frame's length within 5–10 ms. The PulseAudio backend asks pipewire-pulse for it too;
    /// plain PulseAudio is not affected. Applies from the next start from stopped, as
    /// `setChannels` does.
    public func setPipeWireQuantum(samples: Int?) throws(DeskAudioError) {
        if let samples, !Self.pipeWireQuantumRange.contains(samples) {
            let range = Self.pipeWireQuantumRange
            throw .invalidArgument("PipeWire quantum \(samples) samples is not 0 or \(range.lowerBound) to \(range.upperBound)")
        }
        control.withLock { $0.choices.pipeWireQuantum = samples }
    }

    /// The channel layout of the frames: the running capture's, or what the next start
    /// uses when the choice is a layout (stereo for the sink's own until a start reads it).
    public var channelLayout: ChannelLayout {
        control.withLock { $0.channelLayout }
    }

    /// The channel mapping the frames carry, with their layout: the running capture's, or
    /// while stopped the one the next start uses, prepared now (the sink's own layout read
    /// from the server). For a writer that must know them before the first frame (an Ogg
    /// file's OpusHead). Blocks up to 3 s for the server.
    public func prepareChannels() throws(DeskAudioError) -> (layout: ChannelLayout, mapping: OpusChannelMapping) {
        try control.withLock { control throws(DeskAudioError) in
            try control.prepareLayout(on: try parts.backendChoice.current())
            return try control.preparedEncoder { ($0.layout, $0.mapping) }
        }
    }

    /// Takes interleaved PCM the host got elsewhere (HostPCMInput.push: any of its formats,
    /// 1 or 2 channels, 8–96 kHz), mixed with captured audio, or framed alone while nothing
    /// is captured; the library's worker is started for it if capture is off. Returns the
    /// input frames taken (fewer when 1 s is already queued). enable(mic: false, app: false)
    /// stops the worker and drops what is queued.
    public func pushPCM(
        _ bytes: UnsafeRawBufferPointer, format: HostPCMInput.SampleFormat, channels: Int32, rate: Int32
    ) throws(DeskAudioError) -> Int {
        let taken = try parts.hostInput.push(bytes, format: format, channels: channels, rate: rate)
        // Never waits for a start or stop in progress: that one decides whether the worker runs.
        if taken > 0 && !parts.delivery.isDeliveringThread,
            case .failure(let failure)? = control.tryWithLock({ control in
                Result { () throws(DeskAudioError) in try control.runningWorker() }
            })
        {
            // The audio is taken and stays queued (the next push or start frames it):
            // the host must not be told otherwise, or it would push it twice.
            notices.post(.error, "host audio: the library's worker did not start: \(failure.message)")
        }
        parts.wake.signal()
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
        try parts.backends.run(on: try parts.backendChoice.current()) { backend throws(DeskAudioError) in
            (try backend.devices(), backend.kind)
        }
    }

    /// Captures app audio from the monitor of the sink `name` (nil: the default sink,
    /// followed when it changes), or the microphone from the source `name` (nil: the
    /// default source). The name is checked against the server now. A source that is
    /// capturing moves to the device at once; if that fails, it stops and this throws.
    /// Not callable from inside the frame handler.
    public func setDevice(_ name: String?, forMic mic: Bool) throws(DeskAudioError) {
        if parts.delivery.isDeliveringThread {
            throw .wrongThread("a capture device cannot be chosen from inside the audio callback")
        }
        let role: CaptureSource.Role = mic ? .mic : .app
        if let name {
            let kind: CaptureDevice.Kind = mic ? .source : .sink
            guard try devices().contains(where: { $0.name == name && $0.kind == kind }) else {
                throw .noDevice("the audio server has no \(mic ? "source" : "sink") named \(name)")
            }
        }
        let moved = try control.withLock { control throws(DeskAudioError) in
            control.choices.devices[role] = name
            return try control.reopen(role) { $0.device = name }
        }
        if moved { notices.post(.deviceChanged, "\(role.name): \(name ?? "the default")") }
    }

    /// Records, as app audio, what the applications `selection` picks play instead of the
    /// default sink's monitor (nil: the monitor again, or the device chosen with setDevice).
    /// App audio that is capturing switches at once; if that fails, it stops and this throws.
    /// Not callable from inside the frame handler.
    public func setApps(_ selection: AppSelection?) throws(DeskAudioError) {
        try changeAppSelection("applications cannot be chosen") { $0.apps = selection }
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
        try changeAppSelection("the host cannot be muted") { $0.mutesHost = mute }
    }

    /// While `measure` is true, app audio that records a selection of applications (setApps)
    /// measures each recorded stream's level on its own, read with `appLevels()`. On
    /// PipeWire's native backend that is one more stream per recorded application; through
    /// the PulseAudio API the record streams are there anyway. Without a selection there
    /// are no levels per application. App audio that is capturing switches at once; if that
    /// fails, it stops and this throws. Not callable from inside the frame handler.
    public func setMeasuresAppLevels(_ measure: Bool) throws(DeskAudioError) {
        try changeAppSelection("app levels cannot be switched") { $0.measuresAppLevels = measure }
    }

    /// The level of each application stream app audio records now, over the last second
    /// (empty unless setMeasuresAppLevels(true) and a selection). Takes one short lock that
    /// the audio threads never take; may be called from inside the frame handler.
    public func appLevels() -> [AppLevel] {
        parts.slots.feeds.filter { $0.isCapturing && $0.frameFlags == .app }.flatMap(\.appLevels.levels)
    }

    // Applies `change` to the host's choices and switches app audio that is capturing to the
    // selection they now make; `refusal` starts the wrong-thread message.
    private func changeAppSelection(_ refusal: String, _ change: (inout CaptureChoices) -> Void) throws(DeskAudioError) {
        if parts.delivery.isDeliveringThread { throw .wrongThread("\(refusal) from inside the audio callback") }
        try control.withLock { control throws(DeskAudioError) in
            change(&control.choices)
            let effective = control.choices.appSelection
            try control.reopen(.app) { $0.selection = effective }
        }
    }

    /// The streams applications play now on the server the backend choice picks. Blocks up
    /// to 3 s for the server.
    public func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        try parts.backends.run(on: try parts.backendChoice.current()) { backend throws(DeskAudioError) in
            try backend.playbackStreams()
        }
    }

    /// The state of the server that `backend` reaches (nil: the one the backend choice
    /// picks), and which backend answered. Blocks up to 3 s for the server.
    public func serverReport(on backend: AudioBackend? = nil) throws(DeskAudioError)
        -> (report: ServerReport, backend: AudioBackend)
    {
        var requested = backend
        if requested == nil { requested = try parts.backendChoice.current() }
        return try parts.backends.run(on: requested) { backend throws(DeskAudioError) in
            (try backend.serverReport(), backend.kind)
        }
    }

    /// While `ensure` is true, app audio on a server with no sink at all (a machine with no
    /// sound card) creates a virtual sink for as long as it captures, so applications have
    /// somewhere to play and the viewer hears them: on PipeWire a node of the library's
    /// connection (gone with it, however the process ends); through the PulseAudio API a
    /// loaded module-null-sink, unloaded on stop, or by the next capture start on that server
    /// if the process was killed. Applies from the next start of app audio.
    public func setEnsuresSink(_ ensure: Bool) {
        parts.ensuresSink.withLock { $0 = ensure }
    }

    /// The backend asked for with setBackend (nil: automatic).
    public var requestedBackend: AudioBackend? { parts.backendChoice.requested.value }

    /// The backend capture uses now, nil while stopped.
    public var activeBackend: AudioBackend? { parts.backendChoice.inUse.value }

    /// Counts and measurements so far. Takes no lock; may be called from inside the
    /// frame handler.
    public func stats() -> CaptureStats {
        var stats = CaptureStats()
        parts.statsBoard.read(into: &stats)
        // Samples per channel, each ring's floats over its own channel count (6 for 5.1).
        let feeds = parts.slots.feeds
        let droppedSamples = feeds.reduce(0) { $0 + $1.ring.droppedFloats / $1.ring.channels }
        stats.framesDroppedOverflow = UInt64(droppedSamples) / UInt64(AudioFormat.frameSamples)
        stats.framesDroppedSlowCallback = parts.delivery.queue.droppedFrames
        stats.framesSkippedByServer = feeds.reduce(0) { $0 + $1.skippedFrameCount }
        stats.serverZeroCycles = feeds.reduce(0) { $0 + $1.zeroCycleCount }
        // A capture of chosen applications mixes their streams itself: its fills count too.
        let frame = UInt64(AudioFormat.frameSamples)
        stats.framesSilenceFilled += feeds.reduce(0) { $0 + $1.ownMixCounts.filled } / frame
        stats.framesDroppedLate += feeds.reduce(0) { $0 + $1.ownMixCounts.dropped } / frame
        stats.bitrate = settings.requestedBitrate
        stats.backend = activeBackend
        for feed in feeds where feed.isCapturing {
            if feed.frameFlags == .app { stats.app = level(of: feed) }
            if feed.frameFlags == .mic { stats.mic = level(of: feed) }
        }
        return stats
    }

    /// Where the capture's sample clock stands on CLOCK_MONOTONIC after the last chunk of
    /// audio: AudioFrames' `sample_clock` mapped to when its sample sounded (docs/capture.md,
    /// "Capture times"). Nil before the first chunk. Any thread, as often as wanted.
    public func clock() -> CaptureClock? {
        parts.statsBoard.clock
    }

    private func level(of feed: SourceFeed) -> CaptureStats.SourceLevel {
        CaptureStats.SourceLevel(
            peakDBFS: LevelMeter.dBFS(feed.level.peak), rmsDBFS: LevelMeter.dBFS(feed.level.rms),
            serverLatencyNs: feed.serverLatencyNs)
    }

    /// Chooses the backend for the next start: a backend, or nil for automatic (PipeWire
    /// when its daemon answers, else PulseAudio). Overrides DESKAUDIO_BACKEND.
    public func setBackend(_ backend: AudioBackend?) {
        parts.backendChoice.requested.value = backend
    }

    /// Sets where frames go (nil: nowhere). Once this returns, the old handler is not
    /// called again; from inside a handler, the change applies from the next frame.
    public func setFrameHandler(_ handler: FrameHandler?) {
        parts.delivery.setHandler(handler)
    }

    /// Also hands the captured audio, mixed, as PCM to `ring` (nil: nowhere): each chunk of
    /// stereo the worker frames, with its last sample's capture time, as it is framed, for
    /// one consumer of the caller's (a viewer's encoder, with its echo canceller). Chunks that
    /// do not fit are dropped and counted there; 5.1 and 7.1 captures hand none.
    public func setCapturedAudioTap(_ ring: AudioChunkRing?) {
        control.withLock { $0.setCapturedAudioTap(ring) }
    }

    /// True on the thread that is inside this service's frame handler right now.
    public var isInsideFrameHandler: Bool { parts.delivery.isDeliveringThread }

    /// Samples at 48 kHz a decoder skips at the start of a stream (Ogg Opus pre-skip)
    /// with the current encoder settings.
    public func encoderLookahead() throws(DeskAudioError) -> Int32 {
        try control.withLock { control throws(DeskAudioError) in try control.preparedEncoder { $0.lookahead } }
    }

    /// Stepped service (`CaptureDriving.stepped`): frames what the sources' rings hold and
    /// hands the frames to the frame handler, on the calling thread, before it returns.
    /// The events and log messages posted so far go to their handlers then too.
    func step() {
        control.withLock { $0.step() }
        notices.deliverQueued()
    }

    /// Stepped service: the supervisor's check, now (reopens streams dropped or no longer
    /// fed), and the notices it posted delivered.
    func supervise() {
        control.withLock { $0.reopenFailedSources() }
        notices.deliverQueued()
    }

    // Frame handler thread: no more handler calls after this one; a thread of the library's
    // stops the streams once the handler has returned (it cannot be stopped from inside).
    private func stopFromHandler() throws(DeskAudioError) {
        parts.delivery.halt()
        stopPending.store(true, ordering: .releasing)
        let stopper = try startLibraryThread(named: "deskaudio-stop") { [self] in
            control.withLock { control in
                if stopPending.exchange(false, ordering: .acquiringAndReleasing) { control.stopAll() }
            }
        }
        pthread_detach(stopper)
    }
}
