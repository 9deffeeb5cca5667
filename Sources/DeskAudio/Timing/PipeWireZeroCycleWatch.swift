/// Counts the buffers of exact zeros a PipeWire capture stream gets alone between two
/// buffers of sound, in consecutive graph cycles: one such buffer, or a run of them lasting
/// at most `TimingPolicy.serverZeroRunLongestSamples`. On PipeWire 0.3.65 under load one
/// consumer of a monitor now and then gets such a run with nothing lost (one cycle at a
/// 256-sample quantum, two at 128): the audio after it goes on where the buffer before it
/// ended, later than its times say (until the server drops a cycle for that consumer), and
/// other consumers of the same monitor mostly do not get it (docs/reliability.md,
/// R-PW-ZERO-CYCLE). Nothing in the buffers tells it from a short pause in the sound, so it
/// is counted (`SourceFeed`), not changed: the count tells a host or a test where a short
/// silence came from the server. Data thread only; a value type with no allocation.
struct PipeWireZeroCycleWatch: Sendable {
    private enum Last: Sendable {
        /// A buffer of sound.
        case sound
        /// A run of zero buffers right after a buffer of sound, short enough so far to count.
        case zerosAfterSound(buffers: Int, samples: Int)
        /// Anything else: nothing yet, zeros after a break (cycles missed), or a run too long.
        case other
    }

    private var last = Last.other

    /// The next buffer the stream got (`samples` interleaved over `channels`), `skipped`
    /// samples after the one before (0: the next cycle), or the cycle before handed again
    /// (`again`: a double call after a stall, no cycle of its own, R-PW-DOUBLE-CALL).
    /// Returns the buffers of zeros this buffer of sound closes a counted run of (0: none).
    mutating func take(_ samples: UnsafeBufferPointer<Float>, channels: Int, skipped: Int, again: Bool = false) -> Int {
        if again { return 0 }
        if skipped > 0 { last = .other }
        if ZeroGate.isZero(samples) {
            let length = samples.count / max(channels, 1)
            switch last {
            case .sound:
                last = .zerosAfterSound(buffers: 1, samples: length)
            case .zerosAfterSound(let buffers, let run):
                last = run + length <= TimingPolicy.standard.serverZeroRunLongestSamples
                    ? .zerosAfterSound(buffers: buffers + 1, samples: run + length) : .other
            case .other:
                break
            }
            return 0
        }
        defer { last = .sound }
        guard case .zerosAfterSound(let buffers, _) = last else { return 0 }
        return buffers
    }

    /// A new stream: what came before says nothing of its first buffer.
    mutating func reset() { last = .other }
}
