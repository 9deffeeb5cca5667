import Synchronization

/// Stereo 48 kHz audio handed from a thread that must never wait (a player's render thread,
/// the capture worker) to one consumer thread, chunk by chunk, each with the CLOCK_MONOTONIC
/// time of its last sample. Lock-free, one producer and one consumer; a chunk that does not
/// fit whole is dropped and counted, so every chunk read is one that was written. Allocates
/// nothing after creation.
public final class AudioChunkRing: @unchecked Sendable {
    /// Chunks it holds at most.
    public static let chunkCapacity = 256

    private let samples: SampleRing
    // Each chunk's float count and its last sample's time, in slots indexed by the chunk
    // counters (the producer writes a slot before publishing it through `written`).
    private let floatCounts = UnsafeMutableBufferPointer<Int>.allocate(capacity: chunkCapacity)
    private let endTimes = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: chunkCapacity)
    private let written = Atomic<Int>(0)
    private let read = Atomic<Int>(0)
    private let dropped = Atomic<UInt64>(0)

    /// A ring holding at least `seconds` of stereo audio.
    public init(seconds: Double = 1) {
        samples = SampleRing(minimumFloats: max(Int(seconds * Double(AudioFormat.sampleRate)), 1) * AudioFormat.channels)
        floatCounts.initialize(repeating: 0)
        endTimes.initialize(repeating: 0)
    }

    deinit {
        floatCounts.deallocate()
        endTimes.deallocate()
    }

    /// Chunks dropped because the ring was full.
    public var droppedChunks: UInt64 { dropped.load(ordering: .relaxed) }

    /// Producer side: queues `chunk` (interleaved stereo) whose last sample sounds at
    /// `endTimeNs`; false, and counted, when it does not fit whole.
    @discardableResult
    public func put(_ chunk: UnsafeBufferPointer<Float>, endTimeNs: UInt64) -> Bool {
        guard !chunk.isEmpty else { return true }
        let index = written.load(ordering: .relaxed)
        guard index - read.load(ordering: .acquiring) < Self.chunkCapacity, samples.freeFloats >= chunk.count,
            chunk.count % AudioFormat.channels == 0
        else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        samples.write(chunk)
        floatCounts[index % Self.chunkCapacity] = chunk.count
        endTimes[index % Self.chunkCapacity] = endTimeNs
        written.store(index + 1, ordering: .releasing)
        return true
    }

    /// Consumer side: hands each queued chunk, oldest first, to `body` with its last sample's
    /// time, through `scratch` (a chunk longer than it comes in pieces, each with its own
    /// end time); the samples are valid only during the call.
    public func drain(through scratch: UnsafeMutableBufferPointer<Float>, _ body: (UnsafeBufferPointer<Float>, UInt64) -> Void) {
        let room = scratch.count - scratch.count % AudioFormat.channels
        guard room > 0 else { return }
        var index = read.load(ordering: .relaxed)
        let end = written.load(ordering: .acquiring)
        while index < end {
            let slot = index % Self.chunkCapacity
            var left = floatCounts[slot]
            while left > 0 {
                let count = samples.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<min(left, room)]))
                guard count > 0 else { break }
                left -= count
                let afterNs = MonotonicClock.nanoseconds(ofSamples: UInt64(left / AudioFormat.channels))
                body(UnsafeBufferPointer(rebasing: scratch[0..<count]), endTimes[slot] &- afterNs)
            }
            index += 1
            read.store(index, ordering: .releasing)
        }
    }
}
