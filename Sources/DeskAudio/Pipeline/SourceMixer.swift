import Glibc

/// Mixes app audio and microphone audio, which arrive on different clocks, into one
/// stream. Rule: the two are summed sample by sample; a sum beyond ±0.8 is bent smoothly
/// towards ±1 (tanh), so two loud sources never clip hard and a single source below
/// 0.8 passes bit-exact. Neither source is waited for longer than `maxWaitSamples`: when
/// one has nothing while the other is that far ahead, the missing audio counts as silence.
/// Buffers are allocated once; `pull` allocates nothing.
public final class SourceMixer {
    /// 40 ms: the longest one source waits for the other.
    public static let defaultMaxWaitSamples = 1920
    /// Samples per channel one source is waited for, at most.
    public let maxWaitSamples: Int
    /// Samples per channel that counted as silence because their source lagged.
    public private(set) var silenceFilledSamples: UInt64 = 0
    private let scratch: UnsafeMutableBufferPointer<Float>

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
        let appFloats = app.availableFloats
        let micFloats = mic.availableFloats
        let both = min(appFloats, micFloats, limit)
        if both > 0 {
            let target = UnsafeMutableBufferPointer(rebasing: output[0..<both])
            _ = app.read(into: target)
            _ = mic.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<both]))
            for index in 0..<both { target[index] = SourceMixer.limit(target[index] + scratch[index]) }
            return (both, [.app, .mic])
        }
        let (leader, flags, ahead) =
            appFloats > micFloats ? (app, AudioFrameHeader.Flags.app, appFloats) : (mic, .mic, micFloats)
        let excess = ahead - maxWaitSamples * AudioFormat.channels
        guard excess > 0 else { return (0, []) }
        let count = leader.read(into: UnsafeMutableBufferPointer(rebasing: output[0..<min(excess, limit)]))
        silenceFilledSamples += UInt64(count / AudioFormat.channels)
        return (count, flags)
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
