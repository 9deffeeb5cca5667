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
    // The run of zero buffers since the last buffer of sound (nil: none is open: nothing
    // yet, zeros after a break, or the run grew too long to count).
    private var run: (buffers: Int, samples: Int)?
    private var lastWasSound = false

    /// The next buffer the stream got (`samples` interleaved over `channels`), `skipped`
    /// samples after the one before (0: the next cycle), or the cycle before handed again
    /// (`again`: a double call after a stall, no cycle of its own, R-PW-DOUBLE-CALL).
    /// Returns the buffers of zeros this buffer of sound closes a counted run of (0: none).
    mutating func take(_ samples: UnsafeBufferPointer<Float>, channels: Int, skipped: Int, again: Bool = false) -> Int {
        if again { return 0 }
        if skipped > 0 {
            run = nil
            lastWasSound = false
        }
        if ZeroGate.isZero(samples) {
            let length = samples.count / max(channels, 1)
            if lastWasSound {
                run = (1, length)
            } else if let open = run {
                let grown = (open.buffers + 1, open.samples + length)
                run = grown.1 <= TimingPolicy.standard.serverZeroRunLongestSamples ? grown : nil
            }
            lastWasSound = false
            return 0
        }
        let closed = run?.buffers ?? 0
        run = nil
        lastWasSound = true
        return closed
    }

    /// A new stream: what came before says nothing of its first buffer.
    mutating func reset() {
        run = nil
        lastWasSound = false
    }
}
