import Glibc

/// The capture service a host drives: which sources are on, where frames go, and the
/// encoder settings. Every method may be called from any thread.
public final class AudioService: @unchecked Sendable {
    /// Receives each AudioFrame's bytes on the library's worker thread, valid only during the call.
    public typealias FrameHandler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Encoder settings; changes apply at the next frame.
    public let settings = EncoderSettings()

    private let control: UnsafeMutablePointer<pthread_mutex_t>
    private let delivery = FrameDelivery()
    private let ring = SampleRing(minimumFloats: AudioFormat.sampleRate / 2 * AudioFormat.channels)
    private let wake = WakeSignal()
    private var pipeline: FramePipeline?
    private var worker: CaptureWorker?
    private var appCapture: PipeWireCapture?
    private var stoppedAtNs: UInt64?

    /// A stopped service with default settings.
    public init() {
        control = .allocate(capacity: 1)
        pthread_mutex_init(control, nil)
    }

    deinit {
        stopCapture()
        pthread_mutex_destroy(control)
        control.deallocate()
    }

    /// Starts, changes or stops capture to match (false, false stops). Idempotent.
    /// Not callable from inside the frame handler (throws `.wrongThread`).
    public func enable(mic: Bool, app: Bool) throws(DeskAudioError) {
        if delivery.isDeliveringThread {
            throw .wrongThread("enable_audio cannot be called from inside the audio callback")
        }
        if mic {
            throw .notSupported("microphone capture is not supported yet")
        }
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        if app == (appCapture != nil) { return }
        if app { try startCapture() } else { stopCapture() }
    }

    /// True while app audio is being captured.
    public var isCapturing: Bool {
        pthread_mutex_lock(control)
        defer { pthread_mutex_unlock(control) }
        return appCapture != nil
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

    private func preparedPipeline() throws(DeskAudioError) -> FramePipeline {
        if let pipeline { return pipeline }
        let encoder = try OpusFrameEncoder(
            bitrate: settings.requestedBitrate, complexity: settings.requestedComplexity)
        let created = FramePipeline(encoder: encoder)
        pipeline = created
        return created
    }

    // Control lock held.
    private func startCapture() throws(DeskAudioError) {
        let pipeline = try preparedPipeline()
        if let stoppedAtNs {
            let paused = AudioFormat.wholeFrameSamples(inNanoseconds: MonotonicClock.nowNs() &- stoppedAtNs)
            pipeline.markDiscontinuity(skippedSamples: paused)
        }
        ring.discardAll()
        let worker = CaptureWorker(
            ring: ring, wake: wake, pipeline: pipeline, delivery: delivery, settings: settings)
        try worker.start()
        let capture = PipeWireCapture(ring: ring, wake: wake)
        do {
            try capture.start(.defaultSinkMonitor)
        } catch {
            worker.stop()
            stoppedAtNs = MonotonicClock.nowNs()
            throw error
        }
        self.worker = worker
        appCapture = capture
    }

    // Control lock held.
    private func stopCapture() {
        appCapture?.stop()
        appCapture = nil
        worker?.stop()
        if worker != nil { stoppedAtNs = MonotonicClock.nowNs() }
        worker = nil
    }
}
