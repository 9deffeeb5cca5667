/// Cuts interleaved float audio (stereo unless asked otherwise), arriving in chunks of any
/// size, into exact frames (10 ms unless asked otherwise). Nothing is lost, duplicated or reordered; a partial frame
/// is kept until the next chunk completes it. A new frame length takes effect at a frame
/// boundary: the frame being filled keeps its length. Its buffer is allocated once, at
/// creation, for the longest frame.
public struct Framer: ~Copyable {
    private let frame: UnsafeMutableBufferPointer<Float>
    private var filled = 0
    private var frameFloats: Int
    private var nextDuration: FrameDuration?
    private let channels: Int

    /// A framer with an empty frame buffer, cutting frames of `duration` of `channels`
    /// interleaved channels.
    public init(duration: FrameDuration = .ms10, channels: Int = AudioFormat.channels) {
        self.channels = channels
        frame = .zeroed(FrameDuration.longest.samples * channels)
        frameFloats = duration.samples * channels
    }

    deinit { frame.deallocate() }

    /// Interleaved floats held back, waiting for the rest of their frame.
    public var pendingFloats: Int { filled }

    /// Interleaved floats in the frame being filled.
    public var currentFrameFloats: Int { frameFloats }

    /// Cuts frames of `duration` from the next frame boundary on: at once when no partial
    /// frame is held, else once the partial frame is complete.
    public mutating func setDuration(_ duration: FrameDuration) {
        if filled == 0 {
            frameFloats = duration.samples * channels
            nextDuration = nil
        } else {
            nextDuration = duration
        }
    }

    /// Appends `chunk` (interleaved floats; a partial sample frame is allowed, its channels
    /// wait for the rest) and calls `emit` once per completed frame,
    /// in order. The buffer passed to `emit` is valid only during the call.
    public mutating func append(
        _ chunk: UnsafeBufferPointer<Float>,
        emit: (UnsafeBufferPointer<Float>) -> Void
    ) {
        guard var source = chunk.baseAddress else { return }
        var remaining = chunk.count
        while remaining > 0 {
            let take = min(remaining, frameFloats - filled)
            (frame.baseAddress! + filled).update(from: source, count: take)
            filled += take
            source += take
            remaining -= take
            if filled == frameFloats {
                emit(UnsafeBufferPointer(rebasing: frame[0..<frameFloats]))
                filled = 0
                if let nextDuration {
                    frameFloats = nextDuration.samples * channels
                    self.nextDuration = nil
                }
            }
        }
    }

    /// Drops a partial frame (used when capture restarts, so old and new audio never mix);
    /// a length asked for takes effect now.
    public mutating func reset() {
        filled = 0
        if let nextDuration {
            frameFloats = nextDuration.samples * channels
            self.nextDuration = nil
        }
    }
}
