/// Counts the buffers of exact zeros a PipeWire capture stream gets alone between two
/// buffers of sound, in consecutive graph cycles. On PipeWire 0.3.65 under load one consumer
/// of a monitor now and then gets such a cycle with nothing lost: the audio after it goes on
/// where the buffer before it ended, one quantum later than its times say (until the server
/// drops a cycle for that consumer), and other consumers of the same monitor mostly do not
/// get it (docs/reliability.md, R-PW-ZERO-CYCLE). Nothing in the
/// buffer tells it from a pause of one cycle in the sound, so it is counted (`SourceFeed`),
/// not changed: the count tells a host or a test where a short silence came from the server.
/// Data thread only; a value type with no allocation.
struct PipeWireZeroCycleWatch: Sendable {
    private enum Last: Sendable {
        /// A buffer of sound.
        case sound
        /// One buffer of zeros, right after a buffer of sound.
        case zerosAfterSound
        /// Anything else: nothing yet, zeros after zeros, or a break (cycles missed).
        case other
    }

    private var last = Last.other

    /// The next buffer the stream got, `skipped` samples after the one before (0: the next
    /// cycle), or the cycle before handed again (`again`: a double call after a stall, no
    /// cycle of its own, R-PW-DOUBLE-CALL). True when it is sound that closes a cycle of
    /// zeros alone between sound.
    mutating func take(_ samples: UnsafeBufferPointer<Float>, skipped: Int, again: Bool = false) -> Bool {
        if again { return false }
        if skipped > 0 { last = .other }
        if ZeroGate.isZero(samples) {
            last = last == .sound ? .zerosAfterSound : .other
            return false
        }
        let closes = last == .zerosAfterSound
        last = .sound
        return closes
    }

    /// A new stream: what came before says nothing of its first buffer.
    mutating func reset() { last = .other }
}
