import Glibc

/// Mixes app audio and microphone audio, which arrive on different clocks, into one
/// stream. Rule: the two are summed sample by sample; a sum beyond ±0.8 is bent smoothly
/// towards ±1 (tanh), so two loud sources never clip hard and a single source below
/// 0.8 passes bit-exact. Neither source is waited for longer than `maxWaitSamples`: when
/// one has nothing while the other is that far ahead, the missing audio counts as silence.
/// What the lagging source delivers afterwards is mixed with the other's next audio (a
/// source that always runs, say, 50 ms late is heard 10 ms shifted, never lost); only a
/// backlog beyond what the other source holds, as after a stall, is dropped and counted
/// (at most `maxWaitSamples` of it), so the output keeps pace with real time.
/// Buffers are allocated once; `pull` allocates nothing.
public final class SourceMixer {
    /// 40 ms: the longest one source waits for the other.
    public static let defaultMaxWaitSamples = 1920
    /// Samples per channel one source is waited for, at most.
    public let maxWaitSamples: Int
    /// Samples per channel that counted as silence because their source lagged.
    public private(set) var silenceFilledSamples: UInt64 = 0
    /// Samples per channel dropped because they arrived as a backlog after their time was
    /// filled with silence.
    public private(set) var lateDroppedSamples: UInt64 = 0
    private let scratch: UnsafeMutableBufferPointer<Float>
    // Floats of each source replaced by silence and not yet made up for: a backlog of
    // that source, up to this much, is dropped when it arrives.
    private var appDebt = 0
    private var micDebt = 0
    /// 40 ms: what an overlaid source must have queued before it is mixed in.
    public static let overlayPrimeSamples = 1920
    // True while the overlaid source is being mixed in (primed and not yet run dry).
    private var overlayPrimed = false

    /// A mixer that waits at most `maxWaitSamples` per channel for a lagging source.
    public init(maxWaitSamples: Int = SourceMixer.defaultMaxWaitSamples) {
        self.maxWaitSamples = maxWaitSamples
        scratch = .allocate(capacity: 8192)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    /// Moves mixed audio into `output` and returns its float count and which sources are
    /// in it (0 floats: wait for more). A nil ring is a source that is off.
    public func pull(
        app: SampleRing?, mic: SampleRing?, into output: UnsafeMutableBufferPointer<Float>
    ) -> (floats: Int, sources: AudioFrameHeader.Flags) {
        guard let app, let mic else {
            if let app { return (app.read(into: output), [.app]) }
            if let mic { return (mic.read(into: output), [.mic]) }
            return (0, [])
        }
        let limit = min(output.count, scratch.count) & ~1
        payDebt(&appDebt, from: app, beside: mic)
        payDebt(&micDebt, from: mic, beside: app)
        let appFloats = app.availableFloats
        let micFloats = mic.availableFloats
        let both = min(appFloats, micFloats, limit)
        if both > 0 {
            let target = UnsafeMutableBufferPointer(rebasing: output[0..<both])
            _ = app.read(into: target)
            _ = mic.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<both]))
            for index in 0..<both { target[index] = SourceMixer.limit(target[index] + scratch[index]) }
            // Both deliver in step again: what was filled with silence is made up for.
            appDebt = 0
            micDebt = 0
            return (both, [.app, .mic])
        }
        let (leader, flags, ahead) =
            appFloats > micFloats ? (app, AudioFrameHeader.Flags.app, appFloats) : (mic, .mic, micFloats)
        let excess = ahead - maxWaitSamples * AudioFormat.channels
        guard excess > 0 else { return (0, []) }
        let count = leader.read(into: UnsafeMutableBufferPointer(rebasing: output[0..<min(excess, limit)]))
        silenceFilledSamples += UInt64(count / AudioFormat.channels)
        let bound = maxWaitSamples * AudioFormat.channels
        if flags == .app {
            micDebt = min(micDebt + count, bound)
        } else {
            appDebt = min(appDebt + count, bound)
        }
        return (count, flags)
    }

    /// Adds audio from `ring` onto `output` (with the same limiter as the mix); returns
    /// whether anything was added. For host-delivered PCM, which comes in bursts on the
    /// host's own clock: it is mixed in once `overlayPrimeSamples` wait, then continuously,
    /// and after running dry it waits to be primed again, so bursts do not chop it up.
    public func overlay(_ ring: SampleRing, onto output: UnsafeMutableBufferPointer<Float>) -> Bool {
        if !overlayPrimed {
            guard ring.availableFloats >= SourceMixer.overlayPrimeSamples * AudioFormat.channels else { return false }
            overlayPrimed = true
        }
        let wanted = min(output.count, scratch.count)
        let count = ring.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<wanted]))
        if count < wanted { overlayPrimed = false }
        for index in 0..<count { output[index] = SourceMixer.limit(output[index] + scratch[index]) }
        return count > 0
    }

    /// Forgets audio owed by a lagging source (after a gap, what arrives is new audio).
    public func forgetLateAudio() {
        overlayPrimed = false
        appDebt = 0
        micDebt = 0
    }

    /// Drops late audio from `ring`: at most `debt` floats, and only what it holds beyond
    /// the `other` source's buffered audio (a backlog). Late audio that fits beside the
    /// other's is kept, to be mixed.
    private func payDebt(_ debt: inout Int, from ring: SampleRing, beside other: SampleRing) {
        var backlog = min(debt, ring.availableFloats - other.availableFloats) & ~1
        while backlog > 0 {
            let dropped = ring.read(
                into: UnsafeMutableBufferPointer(rebasing: scratch[0..<min(backlog, scratch.count)]))
            guard dropped > 0 else { return }
            debt -= dropped
            backlog -= dropped
            lateDroppedSamples += UInt64(dropped / AudioFormat.channels)
        }
    }

    /// Identity up to ±0.8, then a tanh knee that reaches ±1 only at infinity.
    @inline(__always)
    static func limit(_ sample: Float) -> Float {
        let knee: Float = 0.8
        let magnitude = abs(sample)
        guard magnitude > knee else { return sample }
        let bent = knee + (1 - knee) * tanhf((magnitude - knee) / (1 - knee))
        return sample < 0 ? -bent : bent
    }
}
