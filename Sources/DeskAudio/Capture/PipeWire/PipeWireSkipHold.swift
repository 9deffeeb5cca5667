/// Holds back for one graph cycle the buffer after which cycles were found missed
/// (`PipeWireCycleWatch`). When a stalled process resumes, PipeWire may call its stream twice
/// for the same cycle, the first call's buffer holding the audio of the cycle before (the one
/// pending when the process stopped): the skip worked out from that call's position is then
/// one cycle more than was lost, and silence queued for it would put the audio after it a
/// cycle late against its capture times (docs/reliability.md). The next call tells: the same
/// position again means one cycle less silence, and the held audio a cycle older.
/// Storage is allocated once (its pages taken only when a buffer is held); a buffer larger
/// than it is not held. Data thread only; allocates nothing.
final class PipeWireSkipHold {
    /// Most floats a held buffer may have: a quantum of 8192 samples of 7.1.
    static let capacityFloats = 8192 * 8

    private struct Held {
        var count: Int
        var skipped: Int
        var timeNs: UInt64?
        var position: UInt64
        var channels: Int
    }

    private let stash: UnsafeMutableBufferPointer<Float>
    private var held: Held?

    /// An empty hold.
    init() {
        stash = .allocate(capacity: Self.capacityFloats)
    }

    deinit {
        stash.deallocate()
    }

    /// A buffer of interleaved `samples` (`channels` per frame) came in the graph cycle at
    /// `position`, its first sample sounding at `timeNs`, after `skipped` samples the stream
    /// missed. What goes to the source now, in order, is handed to `silence` (samples per
    /// channel missed) and `audio`: a buffer held from the cycle before first, then this one
    /// unless it is held in turn.
    func take(
        _ samples: UnsafeBufferPointer<Float>, channels: Int, timeNs: UInt64?, skipped: Int, position: UInt64,
        silence: (Int) -> Void, audio: (UnsafeBufferPointer<Float>, UInt64?) -> Void
    ) {
        if let last = held {
            held = nil
            let cycle = last.count / max(last.channels, 1)
            let repeated = position == last.position
            silence(repeated ? max(last.skipped - cycle, 0) : last.skipped)
            let time = repeated ? last.timeNs.map { $0 &- MonotonicClock.nanoseconds(ofSamples: UInt64(cycle)) } : last.timeNs
            audio(UnsafeBufferPointer(rebasing: stash[0..<last.count]), time)
        }
        if skipped > 0 && samples.count <= stash.count {
            _ = UnsafeMutableBufferPointer(rebasing: stash[0..<samples.count]).initialize(from: samples)
            held = Held(count: samples.count, skipped: skipped, timeNs: timeNs, position: position, channels: channels)
            return
        }
        if skipped > 0 { silence(skipped) }
        audio(samples, timeNs)
    }

    /// Forgets a held buffer (the stream stops or starts again).
    func reset() {
        held = nil
    }
}
