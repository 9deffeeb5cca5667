import Glibc
import Synchronization

/// A lock-free single-producer single-consumer ring of interleaved floats (stereo unless
/// told otherwise).
/// The capture thread writes, the library's worker reads; neither ever waits for the
/// other. When the ring is full, the newest audio that does not fit is dropped and
/// counted. Storage is allocated once, at creation, with calloc: its pages take no memory
/// until audio is written to them, so a ring that is never used (the host PCM queue, the
/// microphone's when only app audio is captured) costs nothing, and one that `setChannels`
/// limits to less than its capacity wraps within that span: the pages past it stay untouched.
public final class SampleRing: @unchecked Sendable {
    private let storage: UnsafeMutablePointer<Float>
    private let capacity: Int
    private let writeIndex = Atomic<Int>(0)
    private let readIndex = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    // Interleaved channels, and the span of storage in use: the floats it holds at most and
    // where it wraps (a power of two: the capacity, or less as setChannels asks). Atomics: a
    // stream being replaced may still write while the new one's settings are made (relaxed
    // loads, one each per write or read).
    private let channelCount = Atomic<Int>(AudioFormat.channels)
    private let spanFloats: Atomic<Int>

    /// Interleaved channels: writes take whole samples of this many floats (`setChannels`).
    public var channels: Int { channelCount.load(ordering: .relaxed) }

    /// A ring holding at least `minimumFloats` floats (rounded up to a power of two).
    public init(minimumFloats: Int) {
        precondition(minimumFloats > 0)
        var size = 2
        while size < minimumFloats { size <<= 1 }
        capacity = size
        spanFloats = Atomic(size)
        guard let zeroed = calloc(size, MemoryLayout<Float>.stride) else {
            fatalError("SampleRing: out of memory for \(size) floats")
        }
        storage = zeroed.bindMemory(to: Float.self, capacity: size)
    }

    deinit { free(storage) }

    /// Floats written and not yet read.
    public var availableFloats: Int {
        writeIndex.load(ordering: .acquiring) - readIndex.load(ordering: .acquiring)
    }

    /// Floats that fit now (writer's view: it can only grow until the writer writes).
    public var freeFloats: Int { spanFloats.load(ordering: .relaxed) - availableFloats }

    /// Floats written since creation (producer side: the position of the next write).
    public var writtenFloats: Int { writeIndex.load(ordering: .relaxed) }

    /// Floats read or discarded since creation (consumer side: the position of the next read).
    public var readFloats: Int { readIndex.load(ordering: .relaxed) }

    /// Floats dropped because the ring was full, since creation.
    public var droppedFloats: Int { dropped.load(ordering: .relaxed) }

    /// Before a new stream writes: takes samples of `channels` interleaved floats from now
    /// on, holds at most `minimumFloats` (rounded up to a power of two; nil or more than
    /// the capacity: the capacity) and wraps within that span, and forgets what it holds.
    public func setChannels(_ channels: Int, minimumFloats: Int? = nil) {
        precondition(channels > 0)
        var size = 2
        while size < (minimumFloats ?? capacity) && size < capacity { size <<= 1 }
        channelCount.store(channels, ordering: .relaxed)
        spanFloats.store(size, ordering: .relaxed)
        discardAll()
    }

    /// Producer side: copies in as much of `samples` as fits, in whole samples of
    /// `channels` floats, and returns how many floats were taken.
    @discardableResult
    public func write(_ samples: UnsafeBufferPointer<Float>) -> Int {
        guard let source = samples.baseAddress else { return 0 }
        return append(samples.count) { start, span, count in
            let first = min(count, span - start)
            (storage + start).update(from: source, count: first)
            if first < count { storage.update(from: source + first, count: count - first) }
        }
    }

    /// Producer side: writes `floats` zeros, as much as fits in whole samples (a stretch the
    /// server moved past without this stream), and returns how many floats were written.
    @discardableResult
    public func writeSilence(floats: Int) -> Int {
        append(floats) { start, span, count in
            let first = min(count, span - start)
            (storage + start).update(repeating: 0, count: first)
            if first < count { storage.update(repeating: 0, count: count - first) }
        }
    }

    /// Producer side: reserves room for up to `wanted` floats in whole samples (counting
    /// what does not fit as dropped), lets `fill` write them at the ring offset it gets
    /// (wrapping at `span`), and publishes them; returns how many.
    private func append(_ wanted: Int, _ fill: (_ ringOffset: Int, _ span: Int, _ count: Int) -> Void) -> Int {
        guard wanted > 0 else { return 0 }
        let write = writeIndex.load(ordering: .relaxed)
        let read = readIndex.load(ordering: .acquiring)
        let span = spanFloats.load(ordering: .relaxed)
        let free = span - (write - read)
        var count = min(wanted, free)
        count -= count % channelCount.load(ordering: .relaxed)
        if count < wanted {
            dropped.add(wanted - count, ordering: .relaxed)
        }
        guard count > 0 else { return 0 }
        fill(write & (span - 1), span, count)
        writeIndex.store(write + count, ordering: .releasing)
        return count
    }

    /// Consumer side: moves up to `destination.count` floats out; returns how many.
    public func read(into destination: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let target = destination.baseAddress else { return 0 }
        let read = readIndex.load(ordering: .relaxed)
        let write = writeIndex.load(ordering: .acquiring)
        let count = min(destination.count, write - read)
        guard count > 0 else { return 0 }
        let span = spanFloats.load(ordering: .relaxed)
        let start = read & (span - 1)
        let first = min(count, span - start)
        target.update(from: storage + start, count: first)
        if first < count { (target + first).update(from: storage, count: count - first) }
        readIndex.store(read + count, ordering: .releasing)
        return count
    }

    /// Consumer side: moves up to `destination.count` floats out by adding each onto what
    /// `destination` holds (a mixer's sum, without a copy in between); returns how many.
    public func add(into destination: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let target = destination.baseAddress else { return 0 }
        let read = readIndex.load(ordering: .relaxed)
        let write = writeIndex.load(ordering: .acquiring)
        let count = min(destination.count, write - read)
        guard count > 0 else { return 0 }
        let span = spanFloats.load(ordering: .relaxed)
        let start = read & (span - 1)
        let first = min(count, span - start)
        SampleRing.add(storage + start, onto: target, count: first)
        if first < count { SampleRing.add(storage, onto: target + first, count: count - first) }
        readIndex.store(read + count, ordering: .releasing)
        return count
    }

    private static func add(_ source: UnsafePointer<Float>, onto target: UnsafeMutablePointer<Float>, count: Int) {
        for index in 0..<count { target[index] += source[index] }
    }

    /// Consumer side: forgets everything not yet read.
    public func discardAll() {
        readIndex.store(writeIndex.load(ordering: .acquiring), ordering: .releasing)
    }
}
