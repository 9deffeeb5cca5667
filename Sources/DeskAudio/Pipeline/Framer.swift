/// Cuts interleaved stereo float audio, arriving in chunks of any size, into exact
/// 10 ms frames. Nothing is lost, duplicated or reordered; a partial frame is kept
/// until the next chunk completes it. Its buffer is allocated once, at creation.
public struct Framer: ~Copyable {
    private let frame: UnsafeMutableBufferPointer<Float>
    private var filled = 0

    /// A framer with an empty frame buffer.
    public init() {
        frame = .allocate(capacity: AudioFormat.frameFloats)
        frame.initialize(repeating: 0)
    }

    deinit { frame.deallocate() }

    /// Interleaved floats held back, waiting for the rest of their frame.
    public var pendingFloats: Int { filled }

    /// Appends `chunk` (interleaved stereo floats; an odd count is allowed, the
    /// stray sample waits for its partner) and calls `emit` once per completed frame,
    /// in order. The buffer passed to `emit` is valid only during the call.
    public mutating func append(
        _ chunk: UnsafeBufferPointer<Float>,
        emit: (UnsafeBufferPointer<Float>) -> Void
    ) {
        guard var source = chunk.baseAddress else { return }
        var remaining = chunk.count
        while remaining > 0 {
            let take = min(remaining, AudioFormat.frameFloats - filled)
            (frame.baseAddress! + filled).update(from: source, count: take)
            filled += take
            source += take
            remaining -= take
            if filled == AudioFormat.frameFloats {
                emit(UnsafeBufferPointer(frame))
                filled = 0
            }
        }
    }

    /// Drops a partial frame (used when capture restarts, so old and new audio never mix).
    public mutating func reset() { filled = 0 }
}
