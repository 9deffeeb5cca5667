import Glibc
import Synchronization

/// The library's own thread: waits for captured audio, runs it through the pipeline and
/// hands each AudioFrame to the host. Host callbacks run here, never on a server's thread.
final class CaptureWorker: @unchecked Sendable {
    private let ring: SampleRing
    private let wake: WakeSignal
    private let pipeline: FramePipeline
    private let delivery: FrameDelivery
    private let settings: EncoderSettings
    private let stopRequested = Atomic<Bool>(false)
    private var thread: pthread_t?
    private let chunk: UnsafeMutableBufferPointer<Float>

    init(
        ring: SampleRing, wake: WakeSignal, pipeline: FramePipeline, delivery: FrameDelivery,
        settings: EncoderSettings
    ) {
        self.settings = settings
        self.ring = ring
        self.wake = wake
        self.pipeline = pipeline
        self.delivery = delivery
        chunk = .allocate(capacity: 4096)
        chunk.initialize(repeating: 0)
    }

    deinit { chunk.deallocate() }

    /// Starts the thread.
    func start() throws(DeskAudioError) {
        precondition(thread == nil, "worker started twice")
        stopRequested.store(false, ordering: .releasing)
        var newThread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let status = pthread_create(
            &newThread, nil,
            { context in
                let worker = Unmanaged<CaptureWorker>.fromOpaque(context!).takeRetainedValue()
                worker.run()
                return nil
            }, context)
        guard status == 0 else {
            Unmanaged<CaptureWorker>.fromOpaque(context).release()
            throw .outOfResources("cannot start the worker thread: \(String(cString: strerror(status)))")
        }
        thread = newThread
    }

    /// Stops the thread and waits for it; the pipeline is idle when this returns.
    /// Must not be called on the worker thread itself.
    func stop() {
        guard let thread else { return }
        stopRequested.store(true, ordering: .releasing)
        wake.signal()
        pthread_join(thread, nil)
        self.thread = nil
    }

    private func run() {
        while !stopRequested.load(ordering: .acquiring) {
            wake.wait(milliseconds: 100)
            drain()
        }
    }

    private func drain() {
        while !stopRequested.load(ordering: .acquiring) {
            let count = ring.read(into: chunk)
            guard count > 0 else { return }
            settings.apply(to: pipeline.encoder)
            let now = MonotonicClock.nowNs()
            // Audio still in the ring was captured after this chunk ended.
            let laterNs =
                UInt64(ring.availableFloats / AudioFormat.channels) * 1_000_000_000
                / UInt64(AudioFormat.sampleRate)
            pipeline.process(UnsafeBufferPointer(rebasing: chunk[0..<count]), endTimeNs: now &- laterNs) {
                frame in delivery.deliver(frame)
            }
        }
    }
}
