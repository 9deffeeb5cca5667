/// The one PCM format the pipeline carries: 48 kHz, stereo, interleaved 32-bit float,
/// cut into 10 ms frames unless a capture chose another `FrameDuration`.
public enum AudioFormat {
    /// Samples per second, per channel.
    public static let sampleRate = 48_000
    /// Interleaved channels (left, right).
    public static let channels = 2
    /// Samples per channel in one 10 ms frame (the default length).
    public static let frameSamples = 480
    /// Interleaved floats in one frame.
    public static let frameFloats = frameSamples * channels
    /// Duration of one frame, ns.
    public static let frameDurationNs: UInt64 = 10_000_000

    /// Samples per channel in `nanoseconds`, to the nearest sample. Never overflows.
    public static func samples(inNanoseconds nanoseconds: UInt64) -> UInt64 {
        let rate = UInt64(sampleRate)
        let second = MonotonicClock.nanosecondsPerSecond
        return nanoseconds / second * rate + (nanoseconds % second * rate + second / 2) / second
    }
}
