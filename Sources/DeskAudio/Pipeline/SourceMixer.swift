import Glibc

/// Mixes sources that arrive on different clocks (app audio, microphones, …) into one
/// stream. Rule: the sources are summed sample by sample; a sum beyond ±0.8 is bent smoothly
/// towards ±1 (tanh), so loud sources never clip hard and a single source below 0.8 passes
/// bit-exact. No source is waited for longer than `maxWaitSamples`: when one has nothing
/// while another is that far ahead, the missing audio counts as silence. What the lagging
/// source delivers afterwards is mixed with the others' next audio (a source that always
/// runs, say, 50 ms late is heard 10 ms shifted, never lost); only a backlog beyond what the
/// other sources hold, as after a stall, is dropped and counted (at most `maxWaitSamples` of
/// it), so the output keeps pace with real time. Any number of sources up to
/// `MixerInputs.capacity`, with the same bound. Buffers are allocated once; `pull`
/// allocates nothing.
public final class SourceMixer {
    /// 40 ms: the longest one source waits for the other.
    public static let defaultMaxWaitSamples = 1920
    /// Samples per channel one source is waited for, at most.
    public let maxWaitSamples: Int
    /// Interleaved channels of every input and of the output (2 unless set; set it only
    /// between pulls, with `forgetLateAudio`). An overlaid source is stereo whatever this
    /// is: it goes onto the first two channels.
    public var channels = AudioFormat.channels
    /// Samples per channel that counted as silence because their source lagged.
    public private(set) var silenceFilledSamples: UInt64 = 0
    /// Samples per channel dropped because they arrived as a backlog after their time was
    /// filled with silence.
    public private(set) var lateDroppedSamples: UInt64 = 0
    private let scratch: UnsafeMutableBufferPointer<Float>
    // Per input slot: floats replaced by silence and not yet made up for; a backlog of that
    // source, up to this much, is dropped when it arrives.
    private let debts: UnsafeMutableBufferPointer<Int>
    /// 40 ms: what an overlaid source must have queued before it is mixed in.
    public static let overlayPrimeSamples = 1920
    // True while the overlaid source is being mixed in (primed and not yet run dry).
    private var overlayPrimed = false
    // The two inputs of `pull(app:mic:into:)`.
    private let pair = MixerInputs()

    /// A mixer that waits at most `maxWaitSamples` per channel for a lagging source.
    public init(maxWaitSamples: Int = SourceMixer.defaultMaxWaitSamples) {
        self.maxWaitSamples = maxWaitSamples
        scratch = .zeroed(8192)
        debts = .zeroed(MixerInputs.capacity)
    }

    deinit {
        scratch.deallocate()
        debts.deallocate()
    }

    /// App audio and the microphone (either may be off: nil), as `pull(_:into:)` mixes them.
    public func pull(
        app: SampleRing?, mic: SampleRing?, into output: UnsafeMutableBufferPointer<Float>
    ) -> (floats: Int, sources: AudioFrameHeader.Flags) {
        pair.removeAll()
        if let app { pair.append(app, flags: .app, slot: 0) }
        if let mic { pair.append(mic, flags: .mic, slot: 1) }
        return pull(pair, into: output)
    }

    /// Moves mixed audio from `inputs` into `output` and returns its float count and the
    /// flags of the sources in it (0 floats: wait for more).
    public func pull(
        _ inputs: MixerInputs, into output: UnsafeMutableBufferPointer<Float>
    ) -> (floats: Int, sources: AudioFrameHeader.Flags) {
        switch inputs.count {
        case 0: return (0, [])
        case 1: return (inputs.ring(0).read(into: output), inputs.flags(0))
        default: break
        }
        let limit = wholeSamples(min(output.count, scratch.count))
        for index in 0..<inputs.count { payDebt(of: index, in: inputs) }
        var fewest = Int.max
        var most = 0
        for index in 0..<inputs.count {
            let available = inputs.ring(index).availableFloats
            fewest = min(fewest, available)
            most = max(most, available)
        }
        if fewest > 0 {
            // Every source has audio: mix what all of them hold. What was filled with
            // silence is made up for: they deliver in step again.
            let count = wholeSamples(min(fewest, limit))
            let sources = mix(inputs, floats: count, into: output)
            for index in 0..<inputs.count { debts[inputs.slot(index)] = 0 }
            return (count, sources)
        }
        // Some source has nothing: the others go on without it once one is a whole wait ahead.
        let excess = most - maxWaitSamples * channels
        guard excess > 0 else { return (0, []) }
        var count = min(excess, limit)
        for index in 0..<inputs.count {
            let available = inputs.ring(index).availableFloats
            if available > 0 { count = min(count, available) }
        }
        count = wholeSamples(count)
        let bound = maxWaitSamples * channels
        for index in 0..<inputs.count where inputs.ring(index).availableFloats == 0 {
            let slot = inputs.slot(index)
            debts[slot] = min(debts[slot] + count, bound)
        }
        silenceFilledSamples += UInt64(count / channels)
        return (count, mix(inputs, floats: count, into: output))
    }

    /// Adds stereo audio from `ring` onto `output` (on its first two channels when the
    /// mixer carries more; both summed onto the one channel of mono; with the same limiter
    /// as the mix); returns whether anything was added. For host-delivered PCM, which comes
    /// in bursts on the host's own clock: it is mixed in once `overlayPrimeSamples` wait,
    /// then continuously, and after running dry it waits to be primed again, so bursts do
    /// not chop it up.
    public func overlay(_ ring: SampleRing, onto output: UnsafeMutableBufferPointer<Float>) -> Bool {
        if !overlayPrimed {
            guard ring.availableFloats >= SourceMixer.overlayPrimeSamples * AudioFormat.channels else { return false }
            overlayPrimed = true
        }
        let count = readStereo(ring, forAtMost: output.count / channels)
        if count < output.count / channels { overlayPrimed = false }
        addStereo(samples: count, onto: output)
        return count > 0
    }

    /// Moves stereo audio from `ring` into `output` as this mixer's channels (the first
    /// two; both summed for mono; the others silent), without priming: the host's PCM when
    /// nothing is captured. Returns the floats written.
    public func spread(_ ring: SampleRing, into output: UnsafeMutableBufferPointer<Float>) -> Int {
        if channels == AudioFormat.channels { return ring.read(into: output) }
        let count = readStereo(ring, forAtMost: output.count / channels)
        output.update(repeating: 0)
        addStereo(samples: count, onto: output)
        return count * channels
    }

    // Reads up to `samples` stereo samples from `ring` into the scratch buffer; returns how many.
    private func readStereo(_ ring: SampleRing, forAtMost samples: Int) -> Int {
        let wanted = min(samples, scratch.count / AudioFormat.channels) * AudioFormat.channels
        return ring.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<wanted])) / AudioFormat.channels
    }

    // Adds the scratch buffer's first `samples` stereo samples onto `output` in this mixer's
    // channels, limited.
    private func addStereo(samples: Int, onto output: UnsafeMutableBufferPointer<Float>) {
        for sample in 0..<samples {
            let left = scratch[2 * sample], right = scratch[2 * sample + 1]
            if channels == 1 {
                output[sample] = SourceMixer.limit(output[sample] + 0.5 * (left + right))
            } else {
                let base = sample * channels
                output[base] = SourceMixer.limit(output[base] + left)
                output[base + 1] = SourceMixer.limit(output[base + 1] + right)
            }
        }
    }

    /// Forgets audio owed by a lagging source (after a gap, what arrives is new audio).
    public func forgetLateAudio() {
        overlayPrimed = false
        debts.update(repeating: 0)
    }

    /// Sums `floats` of every input that holds that many into `output` (the limiter on a
    /// sum of two or more); returns the flags of those that did.
    private func mix(
        _ inputs: MixerInputs, floats count: Int, into output: UnsafeMutableBufferPointer<Float>
    ) -> AudioFrameHeader.Flags {
        var sources: AudioFrameHeader.Flags = []
        var mixed = 0
        let target = UnsafeMutableBufferPointer(rebasing: output[0..<count])
        for index in 0..<inputs.count where inputs.ring(index).availableFloats >= count {
            if mixed == 0 {
                _ = inputs.ring(index).read(into: target)
            } else {
                _ = inputs.ring(index).add(into: target)
            }
            mixed += 1
            sources.formUnion(inputs.flags(index))
        }
        // One source alone passes untouched, as it does when it is the only one captured; a
        // sum is limited only when some sample is past the knee (a scan the compiler
        // vectorizes, where the limiter's branch per sample does not).
        if mixed > 1 && SourceMixer.exceedsKnee(UnsafeBufferPointer(target)) {
            for sample in 0..<count { target[sample] = SourceMixer.limit(target[sample]) }
        }
        return sources
    }

    /// Drops late audio from input `index`: at most its debt, and only what it holds beyond
    /// the fullest other input (a backlog). Late audio that fits beside the others' is kept,
    /// to be mixed.
    private func payDebt(of index: Int, in inputs: MixerInputs) {
        let slot = inputs.slot(index)
        guard debts[slot] > 0 else { return }
        let ring = inputs.ring(index)
        var othersHold = 0
        for other in 0..<inputs.count where other != index {
            othersHold = max(othersHold, inputs.ring(other).availableFloats)
        }
        var backlog = wholeSamples(min(debts[slot], ring.availableFloats - othersHold))
        while backlog > 0 {
            let dropped = ring.read(
                into: UnsafeMutableBufferPointer(rebasing: scratch[0..<wholeSamples(min(backlog, scratch.count))]))
            guard dropped > 0 else { return }
            debts[slot] -= dropped
            backlog -= dropped
            lateDroppedSamples += UInt64(dropped / channels)
        }
    }

    // `floats` rounded down to whole samples of `channels` floats.
    @inline(__always)
    private func wholeSamples(_ floats: Int) -> Int { floats - floats % channels }

    /// The limiter's knee: samples within ±knee pass unchanged.
    static let knee: Float = 0.8

    /// Whether any sample's magnitude is above the knee (magnitudes compare as bit patterns:
    /// a float without its sign bit orders like an unsigned integer).
    static func exceedsKnee(_ samples: UnsafeBufferPointer<Float>) -> Bool {
        var peakBits: UInt32 = 0
        for sample in samples { peakBits = max(peakBits, sample.bitPattern & 0x7FFF_FFFF) }
        return peakBits > knee.bitPattern
    }

    /// Identity up to ±0.8, then a tanh knee that reaches ±1 only at infinity.
    @inline(__always)
    static func limit(_ sample: Float) -> Float {
        let knee = SourceMixer.knee
        let magnitude = abs(sample)
        guard magnitude > knee else { return sample }
        let bent = knee + (1 - knee) * tanhf((magnitude - knee) / (1 - knee))
        return sample < 0 ? -bent : bent
    }
}
