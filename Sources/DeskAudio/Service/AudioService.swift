import Glibc
import Synchronization

/// The capture service a host drives: which sources are on, through which backend, where
/// frames go, and the encoder settings. Every method may be called from any thread.
public final class AudioService: @unchecked Sendable {
    /// Receives each AudioFrame's bytes on the library's delivery thread, valid only during the call.
    public typealias FrameHandler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Encoded frames that wait for a slow frame handler before the oldest is dropped.
    public static let frameQueueCapacity = FrameQueue.capacity

    /// Encoder settings; changes apply at the next frame.
    public let settings = EncoderSettings()

    private let control: UnsafeMutablePointer<pthread_mutex_t>
    private let delivery: FrameDelivery
    /// Events and log messages for the host.
    public let notices = NoticeBoard()
    private lazy var appFeed = SourceFeed(name: "app audio", notices: notices)
    private lazy var micFeed = SourceFeed(name: "the microphone", notices: notices)
    private let mixer = SourceMixer()
    private let hostInput = HostPCMInput()
    private let statsBoard = StatsBoard()
    private let wake = WakeSignal()
    private var pipeline: FramePipeline?
    private var worker: CaptureWorker?
    private var appStream: CaptureStream?
    private var micStream: CaptureStream?
    private var stoppedAtNs: UInt64?
    // Read without the control lock (from the frame handler too); written with it held.
    private let requested = BackendSlot()
    private let inUse = BackendSlot()
    // The devices asked for by name; nil follows the default.
    private var appDevice: String?
    private var micDevice: String?
    // Reopens streams whose server went away; never waits for the control lock.
    private var supervisor: pthread_t?
    private let supervisorStop = Atomic<Bool>(false)
    private let supervisorWake = WakeSignal()
    private var appRetry = RetryBackoff()
    private var micRetry = RetryBackoff()

    /// A stopped service with default settings.
    public init() {
        delivery = FrameDelivery(stats: statsBoard)
        control = .allocate(capacity: 1)
        pthread_mutex_init(control, nil)
    }

    deinit {
        stopAll()
        pthread_mutex_destroy(control)
        control.deallocate()
    }

    /// Starts, changes or stops capture to match (false, false stops). Idempotent.
    /// Sources already running keep running through a change. On failure, nothing that
    /// this call started is left running. Not callable from inside the frame handler.
    public func enable(mic: Bool, app: Bool) throws(DeskAudioError) {
        if delivery.isDeliveringThread {
            throw .wrongThread("enable_audio cannot be called from inside the audio callback")
        }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        let startApp = app && appStream == nil
        let startMic = mic && micStream == nil
        if startApp || startMic {
            let worker = try runningWorker()
            let backend = try chosenBackend()
            do throws(DeskAudioError) {
                if startApp { appStream = try open(appTarget, feed: appFeed, backend: backend) }
                if startMic { micStream = try open(micTarget, feed: micFeed, backend: backend) }
            } catch {
                notices.log(.error, "capture did not start: \(error.message)")
                if startApp { stop(source: CaptureWorker.appBit) }
                if startMic { stop(source: CaptureWorker.micBit) }
                if appStream == nil && micStream == nil { stopAll() }
                throw error
            }
            worker.activeSources.store(
                (appStream == nil ? 0 : CaptureWorker.appBit) | (micStream == nil ? 0 : CaptureWorker.micBit),
                ordering: .releasing)
        }
        if !app { stop(source: CaptureWorker.appBit) }
        if !mic { stop(source: CaptureWorker.micBit) }
        if !app && !mic { stopAll() }
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
        return try AudioBackend.run(on: try chosenBackend()) { backend throws(DeskAudioError) in
            (try CaptureDevice.list(on: backend), backend)
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
        if let name {
            let kind: CaptureDevice.Kind = mic ? .source : .sink
            guard try devices().contains(where: { $0.name == name && $0.kind == kind }) else {
                throw .noDevice("the audio server has no \(mic ? "source" : "sink") named \(name)")
            }
        }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        if mic { micDevice = name } else { appDevice = name }
        let bit = mic ? CaptureWorker.micBit : CaptureWorker.appBit
        guard let worker, (mic ? micStream : appStream) != nil else { return }
        stop(source: bit)
        let stream = try open(mic ? micTarget : appTarget, feed: mic ? micFeed : appFeed, backend: inUse.value)
        if mic { micStream = stream } else { appStream = stream }
        worker.activeSources.bitwiseOr(bit, ordering: .releasing)
        notices.post(.deviceChanged, "\(mic ? micFeed.name : appFeed.name): \(name ?? "the default")")
    }

    /// The backend capture uses now, nil while stopped.
    public var activeBackend: AudioBackend? { inUse.value }

    /// Counts and measurements so far. Takes no lock; may be called from inside the
    /// frame handler.
    public func stats() -> CaptureStats {
        var stats = CaptureStats()
        statsBoard.read(into: &stats)
        stats.framesDroppedOverflow =
            UInt64(appFeed.ring.droppedFloats + micFeed.ring.droppedFloats) / UInt64(AudioFormat.frameFloats)
        stats.framesDroppedSlowCallback = delivery.queue.droppedFrames
        stats.bitrate = settings.requestedBitrate
        stats.backend = inUse.value
        if appFeed.isCapturing { stats.app = level(of: appFeed) }
        if micFeed.isCapturing { stats.mic = level(of: micFeed) }
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

    /// Samples at 48 kHz a decoder skips at the start of a stream (Ogg Opus pre-skip)
    /// with the current encoder settings.
    public func encoderLookahead() throws(DeskAudioError) -> Int32 {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        return try preparedPipeline().encoder.lookahead
    }

    private var appTarget: CaptureTarget { appDevice.map { .sinkMonitor(named: $0) } ?? .defaultSinkMonitor }
    private var micTarget: CaptureTarget { micDevice.map { .source(named: $0) } ?? .defaultSource }

    // The backend in use, else the one asked for, else DESKAUDIO_BACKEND's.
    private func chosenBackend() throws(DeskAudioError) -> AudioBackend? {
        if let backend = inUse.value ?? requested.value { return backend }
        return try AudioBackend.fromEnvironment()
    }

    private func preparedPipeline() throws(DeskAudioError) -> FramePipeline {
        if let pipeline { return pipeline }
        let encoder = try OpusFrameEncoder(
            bitrate: settings.requestedBitrate, complexity: settings.requestedComplexity)
        let created = FramePipeline(encoder: encoder)
        pipeline = created
        return created
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
            appRing: appFeed.ring, micRing: micFeed.ring, hostRing: hostInput.ring, wake: wake,
            pipeline: pipeline, delivery: delivery, settings: settings, mixer: mixer, stats: statsBoard)
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
            reopenIfFailed(&appStream, appTarget, feed: appFeed, bit: CaptureWorker.appBit, retry: &appRetry)
            reopenIfFailed(&micStream, micTarget, feed: micFeed, bit: CaptureWorker.micBit, retry: &micRetry)
            pthread_mutex_unlock(control)
        }
    }

    // Control lock held. A stream the server dropped is reopened (on any backend the
    // choice allows), with back-off; the worker flags the gap.
    private func reopenIfFailed(
        _ stream: inout CaptureStream?, _ target: CaptureTarget, feed: SourceFeed, bit: UInt8,
        retry: inout RetryBackoff
    ) {
        guard let failed = stream, failed.hasFailed, let worker, retry.isDue(at: MonotonicClock.nowNs())
        else {
            return
        }
        if !retry.isRetrying {
            notices.post(.disconnected, "\(feed.name): the audio server dropped the stream")
            notices.log(.warning, "\(feed.name): stream lost, reconnecting")
        }
        worker.activeSources.bitwiseAnd(~bit, ordering: .releasing)
        failed.stop()
        do throws(DeskAudioError) {
            var backend = requested.value
            if backend == nil { backend = try AudioBackend.fromEnvironment() }
            stream = try open(target, feed: feed, backend: backend)
            worker.gapPending.store(true, ordering: .releasing)
            worker.activeSources.bitwiseOr(bit, ordering: .releasing)
            retry.reset()
        } catch {
            notices.log(.debug, "\(feed.name): reconnect failed: \(error.message)")
            retry.failed(at: MonotonicClock.nowNs())  // the failed stream stays, to be retried
        }
    }

    // Control lock held. The source's bit is clear, so nobody reads its ring: empty it
    // (stale audio from an earlier run must not leak in), then start its stream.
    private func open(
        _ target: CaptureTarget, feed: SourceFeed, backend: AudioBackend?
    ) throws(DeskAudioError) -> CaptureStream {
        feed.restart()
        let stream = try AudioBackend.run(on: backend) { backend throws(DeskAudioError) in
            switch backend {
            case .pipewire: try openPipeWire(target, feed: feed)
            case .pulse: try openPulse(target, feed: feed)
            }
        }
        feed.isCapturing = true
        let backendName = inUse.value?.rawValue ?? "?"
        notices.post(.connected, "\(feed.name): \(target) via \(backendName)")
        notices.log(.info, "\(feed.name) capturing \(target) via \(backendName)")
        return stream
    }

    private func openPipeWire(_ target: CaptureTarget, feed: SourceFeed) throws(DeskAudioError)
        -> CaptureStream
    {
        let stream = PipeWireCapture(feed: feed, wake: wake)
        try stream.start(target)
        inUse.value = .pipewire
        return stream
    }

    private func openPulse(_ target: CaptureTarget, feed: SourceFeed) throws(DeskAudioError) -> CaptureStream
    {
        let stream = PulseCapture(feed: feed, wake: wake)
        try stream.start(target)
        inUse.value = .pulse
        return stream
    }

    // Control lock held. Stops one source's stream; the worker stops reading its ring first.
    private func stop(source bit: UInt8) {
        worker?.activeSources.bitwiseAnd(~bit, ordering: .releasing)
        if bit == CaptureWorker.appBit {
            if appStream != nil { notices.log(.info, "app audio stopped") }
            appStream?.stop()
            appStream = nil
            appFeed.isCapturing = false
        } else {
            if micStream != nil { notices.log(.info, "the microphone stopped") }
            micStream?.stop()
            micStream = nil
            micFeed.isCapturing = false
        }
    }

    // Control lock held.
    private func stopAll() {
        if let supervisor {
            supervisorStop.store(true, ordering: .releasing)
            supervisorWake.signal()
            pthread_join(supervisor, nil)
            self.supervisor = nil
        }
        stop(source: CaptureWorker.appBit)
        stop(source: CaptureWorker.micBit)
        worker?.stop()
        if worker != nil { stoppedAtNs = MonotonicClock.nowNs() }
        hostInput.reset()
        worker = nil
        inUse.value = nil
    }
}
