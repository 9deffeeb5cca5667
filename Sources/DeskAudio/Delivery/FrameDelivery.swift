import Glibc
import Synchronization

/// Hands frames to the host's handler on a thread of its own, so a slow handler never
/// holds up encoding: the worker pushes each frame into a bounded FrameQueue, this
/// thread takes them out in order and calls the handler. Once `setHandler` has returned
/// (on any thread but the delivering one), the old handler is never called again
/// (`HandlerSlot`).
final class FrameDelivery: @unchecked Sendable {
    /// Receives each AudioFrame's bytes, valid only during the call.
    typealias Handler = @Sendable (UnsafeRawBufferPointer) -> Void

    /// Frames waiting for the handler.
    let queue = FrameQueue()
    private let handler = HandlerSlot<Handler?>(nil)
    private let halted = Atomic<Bool>(false)
    private let stats: StatsBoard
    private var latency = LatencyWindow()
    private var thread: pthread_t?
    private let frame: UnsafeMutableRawBufferPointer

    /// A stopped delivery that publishes the callback latency to `stats`.
    init(stats: StatsBoard) {
        self.stats = stats
        frame = .allocate(byteCount: AudioFrameWriter.maxFrameBytes, alignment: 8)
    }

    deinit {
        frame.deallocate()
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
        precondition(thread == nil, "delivery started twice")
        queue.reopen()
        resume()
        thread = try startLibraryThread(named: "deskaudio-deliver") { [self] in run() }
    }

    /// Stops the delivery thread after the handler call in progress, if any, and waits for
    /// it; frames still queued are dropped. Must not be called on the delivery thread.
    func stop() {
        guard let thread else { return }
        queue.close()
        pthread_join(thread, nil)
        self.thread = nil
    }

    private func run() {
        while let length = queue.pop(into: frame) {
            // The frame was complete when its last sample arrived: its capture time (that
            // of its first sample) plus its duration.
            let captureTimeNs = UInt64(
                littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.captureTime, as: UInt64.self))
            let frameSamples = UInt16(
                littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.frameSamples, as: UInt16.self))
            let completedNs = captureTimeNs &+ MonotonicClock.nanoseconds(ofSamples: UInt64(frameSamples))
            let now = MonotonicClock.nowNs()
            if let window = latency.add(now > completedNs ? now - completedNs : 0) {
                stats.publishLatency(meanNs: window.meanNs, maxNs: window.maxNs)
            }
            if halted.load(ordering: .acquiring) { continue }
            handler.call { $0?(UnsafeRawBufferPointer(rebasing: frame[0..<length])) }
        }
    }
}
