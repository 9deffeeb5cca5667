/// Holds back for one graph cycle the buffer after which cycles were found missed
/// (`PipeWireCycleWatch`). When a stalled stream resumes, PipeWire may call it twice for one
/// cycle (the same position, `pw_time.ticks`, in both calls); the next call tells what the
/// held buffer was. Seen sample for sample against what was played (docs/reliability.md, R-PW-DOUBLE-CALL):
/// - the second buffer is the first again, or zeros, and the first is audio: the first came
///   after the cycles missed, as counted; the second is no audio and is dropped;
/// - the second is audio of its own: the first was the cycle pending when the stream stalled,
///   right after the buffer before it, and the cycles missed lie between the two (one fewer
///   than counted, the first taking its place);
/// - both are zeros: one cycle was missed, whatever was counted (one or two); the first
///   stands for it, and the second is dropped.
/// A new position in the next call: the held buffer came after the cycles missed, as counted.
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
    /// channel missed) and `audio`, in their order on the timeline; a buffer held from the
    /// cycle before is settled first (see above), and this one is held in turn after a skip.
    func take(
        _ samples: UnsafeBufferPointer<Float>, channels: Int, timeNs: UInt64?, skipped: Int, position: UInt64,
        silence: (Int) -> Void, audio: (UnsafeBufferPointer<Float>, UInt64?) -> Void
    ) {
        if let last = held {
            held = nil
            let first = UnsafeBufferPointer(rebasing: stash[0..<last.count])
            if position == last.position {
                let secondIsSilent = ZeroGate.isZero(samples)
                if secondIsSilent && ZeroGate.isZero(first) {
                    audio(first, last.timeNs)
                } else if secondIsSilent || samples.elementsEqual(first) {
                    silence(last.skipped)
                    audio(first, last.timeNs)
                } else {
                    let cycle = last.count / max(last.channels, 1)
                    let skippedNs = MonotonicClock.nanoseconds(ofSamples: UInt64(last.skipped))
                    audio(first, last.timeNs.map { $0 &- skippedNs })
                    silence(max(last.skipped - cycle, 0))
                    audio(samples, timeNs)
                }
                return
            }
            silence(last.skipped)
            audio(first, last.timeNs)
        }
        if skipped > 0 && samples.count <= stash.count {
            _ = UnsafeMutableBufferPointer(rebasing: stash[0..<samples.count]).initialize(from: samples)
            held = Held(count: samples.count, skipped: skipped, timeNs: timeNs, position: position, channels: channels)
            return
        }
        if skipped > 0 { silence(skipped) }
        audio(samples, timeNs)
    }

    /// True while a buffer is held (the next call settles it).
    var isHolding: Bool { held != nil }

    /// Forgets a held buffer (the stream stops or starts again).
    func reset() {
        held = nil
    }
}
