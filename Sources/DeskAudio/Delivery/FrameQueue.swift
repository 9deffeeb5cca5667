import Glibc
import Synchronization

/// A bounded queue of AudioFrames between the worker, which encodes in real time, and the
/// thread that calls the host. When the host falls 0.5 s behind (`capacity` frames of 10 ms,
/// as many frames as make 0.5 s at other lengths), the oldest frame is dropped and counted,
/// and the next frame taken out carries the after-loss flag.
/// Storage is allocated once (its pages taken as frames are first written there); `push`
/// and `pop` allocate nothing. The lock is held only to copy a frame in or out, never during
/// a host call, and the capture thread never takes it.
final class FrameQueue: @unchecked Sendable {
    /// Audio the queue holds, samples per channel: 0.5 s.
    static let heldSamples = AudioFormat.sampleRate / 2
    /// 10 ms frames the queue holds: 50.
    static let capacity = heldSamples / FrameDuration.ms10.samples
    // Enough slots for 0.5 s of the shortest frames.
    private static let slotCount = heldSamples / FrameDuration.ms2_5.samples

    private let lock = PThreadMutex()
    private let nonEmpty: UnsafeMutablePointer<pthread_cond_t>
    private let slots = FrameSlots(count: FrameQueue.slotCount)
    private var head = 0
    private var count = 0
    private var dropsSinceLastPop = false
    private var closed = false
    private let dropped = Atomic<UInt64>(0)

    /// An empty, open queue.
    init() {
        nonEmpty = .allocate(capacity: 1)
        pthread_cond_init(nonEmpty, nil)
    }

    deinit {
        pthread_cond_destroy(nonEmpty)
        nonEmpty.deallocate()
    }

    /// Frames dropped because the queue was full, since creation.
    var droppedFrames: UInt64 { dropped.load(ordering: .relaxed) }

    /// Worker: copies `frame` (a whole AudioFrame) in, first dropping the oldest frames while
    /// 0.5 s of frames of its length are queued. Never waits for the host.
    func push(_ frame: UnsafeRawBufferPointer) {
        precondition(frame.count <= AudioFrameWriter.maxFrameBytes && frame.count >= AudioFrameHeader.byteCount)
        let frameSamples = UInt16(
            littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.frameSamples, as: UInt16.self))
        let limit = FrameQueue.heldSamples / max(Int(frameSamples), FrameDuration.ms2_5.samples)
        lock.lock()
        while count >= limit {
            head = (head + 1) % FrameQueue.slotCount
            count -= 1
            dropsSinceLastPop = true
            dropped.add(1, ordering: .relaxed)
        }
        let index = (head + count) % FrameQueue.slotCount
        slots.store(frame, in: index)
        count += 1
        pthread_cond_signal(nonEmpty)
        lock.unlock()
    }

    /// Delivery thread: waits for the oldest frame (unless `waiting` is false: then nil when
    /// none is queued) and copies it into `buffer` (at least AudioFrameWriter.maxFrameBytes),
    /// setting the after-loss flag if frames were dropped since the last pop. Returns its
    /// length, or nil once closed.
    func pop(into buffer: UnsafeMutableRawBufferPointer, waiting: Bool = true) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        while waiting && count == 0 && !closed { pthread_cond_wait(nonEmpty, lock.raw) }
        guard !closed, count > 0 else { return nil }
        let frame = slots.bytes(in: head)
        let length = frame.count
        buffer.copyMemory(from: frame)
        if dropsSinceLastPop {
            buffer[AudioFrameHeader.Offset.flags] |= AudioFrameHeader.Flags.afterLoss.rawValue
            dropsSinceLastPop = false
        }
        count -= 1
        // Emptied: the next frame goes to the first slot again, so a host that keeps up
        // touches a few slots' pages, not all 0.26 MB of them.
        head = count == 0 ? 0 : (head + 1) % FrameQueue.slotCount
        return length
    }

    /// Wakes the delivery thread and makes every pop return nil; frames still queued are
    /// forgotten.
    func close() {
        lock.lock()
        closed = true
        pthread_cond_broadcast(nonEmpty)
        lock.unlock()
    }

    /// Empties the queue and opens it again, for the next run.
    func reopen() {
        lock.lock()
        head = 0
        count = 0
        dropsSinceLastPop = false
        closed = false
        lock.unlock()
    }
}
