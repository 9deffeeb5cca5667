import Glibc
import Synchronization

/// Hands frames to the host's handler on a thread of its own, so a slow handler never
/// holds up encoding: the worker pushes each frame into a bounded FrameQueue, this
/// thread takes them out in order and calls the handler. Once `setHandler` has returned
/// (on any thread but the delivering one), the old handler is never called again
/// (`HandlerSlot`).
final class FrameDelivery: Sendable {
    /// Receives each AudioFrame's bytes, valid only during the call.
    typealias Handler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Frames waiting for the handler.
    let queue = FrameQueue()
    private let handler = HandlerSlot<Handler?>(nil)
    private let halted = Atomic<Bool>(false)
    private let stats: StatsBoard
    private let clock: LibraryClock
    // The delivery thread while one runs; started and joined by the control calls.
    private let thread = LockedValue<pthread_t?>(nil)
    // Where a stepped caller's frames are copied out and their latency kept (the thread
    // keeps its own).
    private let steppedScratch = LockOwned(Scratch())

    /// A frame taken out of the queue, and the latency window it is counted in: the
    /// delivering thread's alone.
    private final class Scratch {
        let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: AudioFrameWriter.maxFrameBytes, alignment: 8)
        var latency = LatencyWindow()
        deinit { frame.deallocate() }
    }

    /// A stopped delivery that publishes the callback latency, on `clock`, to `stats`.
    init(stats: StatsBoard, clock: LibraryClock) {
        self.stats = stats
        self.clock = clock
    }

    /// Replaces the handler. Called from inside a handler, it takes effect for the next
    /// frame; called elsewhere, it waits for a handler call in progress to finish.
    func setHandler(_ newHandler: Handler?) {
        handler.update { $0 = newHandler }
    }

    /// True on the thread that is inside a handler call right now.
    var isDeliveringThread: Bool {
        handler.isCallingThread
    }

    /// No handler call after the one in progress: frames are dropped until `resume` or the
    /// next `start`. Any thread, the delivering one included.
    func halt() { halted.store(true, ordering: .releasing) }

    /// Undoes `halt`: the next frame goes to the handler again.
    func resume() { halted.store(false, ordering: .releasing) }

    /// Starts the delivery thread with an empty queue.
    func start() throws(DeskAudioError) {
        startStepped()
        let started = try startLibraryThread(named: "deskaudio-deliver") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// Empties the queue for a caller that delivers itself (`deliverQueued`), with no thread.
    func startStepped() {
        precondition(thread.withLock { $0 } == nil, "delivery started twice")
        queue.reopen()
        resume()
    }

    /// Stepped: hands every queued frame to the handler on the calling thread, in order.
    func deliverQueued() {
        precondition(thread.withLock { $0 } == nil, "the delivery thread delivers")
        steppedScratch.withLock { scratch in
            while let length = queue.pop(into: scratch.frame, waiting: false) { deliver(length, from: scratch) }
        }
    }

    /// Stops the delivery thread after the handler call in progress, if any, and waits for
    /// it; frames still queued are dropped. Must not be called on the delivery thread.
    func stop() {
        queue.close()
        guard let running = thread.withLock({ $0 }) else { return }
        pthread_join(running, nil)
        thread.withLock { $0 = nil }
    }

    private func run() {
        let scratch = Scratch()
        while let length = queue.pop(into: scratch.frame) { deliver(length, from: scratch) }
    }

    // Hands the frame of `length` bytes in `scratch` to the handler, after its latency is counted.
    private func deliver(_ length: Int, from scratch: Scratch) {
        let frame = scratch.frame
        // The frame was complete when its last sample arrived: its capture time (that
        // of its first sample) plus its duration.
        let captureTimeNs = UInt64(
            littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.captureTime, as: UInt64.self))
        let frameSamples = UInt16(
            littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.frameSamples, as: UInt16.self))
        let completedNs = captureTimeNs &+ MonotonicClock.nanoseconds(ofSamples: UInt64(frameSamples))
        let now = clock.nowNs()
        if let window = scratch.latency.add(now > completedNs ? now - completedNs : 0) {
            stats.publishLatency(meanNs: window.meanNs, maxNs: window.maxNs)
        }
        if halted.load(ordering: .acquiring) { return }
        handler.call { $0?(UnsafeRawBufferPointer(rebasing: frame[0..<length])) }
    }
}
