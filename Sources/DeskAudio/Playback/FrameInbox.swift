import Glibc
import Synchronization

/// AudioFrames handed from the host's threads to a player's real-time thread: a fixed ring of
/// slots, each a whole frame and its arrival time. Producers (any thread) are serialized by a
/// lock of their own; the consumer takes no lock and never waits. When the ring is full the
/// newest frame is refused (counted), never one the consumer may be reading. Allocates
/// nothing after creation.
final class FrameInbox: @unchecked Sendable {
    /// Frames it holds at most: 640 ms.
    static let capacity = 64

    private let slots = FrameSlots(count: FrameInbox.capacity)
    // Counters of frames written and read; written by one side each.
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    private let refused = Atomic<UInt64>(0)
    // The write side (the next slot and the copy into it): one producer at a time.
    private let producers = LockedValue<Void>(())

    /// Frames refused because the ring was full.
    var refusedFrames: UInt64 { refused.load(ordering: .relaxed) }

    /// Any thread: queues `frame` (at most `AudioFrameWriter.maxFrameBytes`) that arrived at
    /// `arrivalNs`; false when the ring is full.
    @discardableResult
    func put(_ frame: UnsafeRawBufferPointer, arrivalNs: UInt64) -> Bool {
        return producers.withLock { _ in
            let index = written.load(ordering: .relaxed)
            guard index - read.load(ordering: .acquiring) < FrameInbox.capacity else {
                refused.add(1, ordering: .relaxed)
                return false
            }
            slots.store(frame, in: index % FrameInbox.capacity, stamp: arrivalNs)
            written.store(index + 1, ordering: .releasing)
            return true
        }
    }

    /// The consumer's thread: hands each queued frame, oldest first, to `body` (the bytes are
    /// valid only during the call) and frees its slot.
    func drain(_ body: (UnsafeRawBufferPointer, UInt64) -> Void) {
        var index = read.load(ordering: .relaxed)
        let end = written.load(ordering: .acquiring)
        while index < end {
            let slot = index % FrameInbox.capacity
            body(slots.bytes(in: slot), slots.stamp(in: slot))
            index += 1
            read.store(index, ordering: .releasing)
        }
    }
}
