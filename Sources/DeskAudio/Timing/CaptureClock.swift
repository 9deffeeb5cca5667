/// Where a capture's sample clock stands on CLOCK_MONOTONIC: the AudioFrames' `sample_clock`
/// mapped to the time its sample sounded, as the last chunk of audio placed it. A host puts
/// any sample on its video timeline with `timeNs(ofSampleClock:)`.
public struct CaptureClock: Sendable, Equatable {
    /// Where the mapping comes from.
    public enum Origin: Sendable, Equatable {
        /// The audio server's clock of the source named (app audio, or the microphone when
        /// no app audio is captured), smoothed: frames are exactly their length apart.
        case serverClock(AudioFrameHeader.Flags)
        /// Estimated from when the audio reached the library (no server clock yet, or the
        /// host's own PCM alone).
        case arrival
    }

    /// A sample clock value (as AudioFrames count samples).
    public var sampleClock: UInt64
    /// CLOCK_MONOTONIC nanoseconds at which that sample sounded.
    public var timeNs: UInt64
    /// Nanoseconds one sample lasts on CLOCK_MONOTONIC (20 833.3 at 48 kHz when the sound
    /// card's clock and the system's agree).
    public var nanosecondsPerSample: Double
    /// The sound card's rate against CLOCK_MONOTONIC, in parts per million (positive: its
    /// samples last longer).
    public var rateErrorPPM: Double
    /// Root mean square of the server's timing reports' distance from the mapping, in ns: a
    /// measure of how far one report strays (the mapping itself strays less).
    public var jitterNs: Double
    /// Times the mapping started again from a report far off it (a stall, a skip, a restart).
    public var relocks: Int
    /// Where the mapping comes from.
    public var origin: Origin

    /// The CLOCK_MONOTONIC time (ns) of the sample numbered `sampleClock` on this mapping.
    public func timeNs(ofSampleClock other: UInt64) -> UInt64 {
        let offset = (Double(other) - Double(sampleClock)) * nanosecondsPerSample
        return UInt64(max(Double(timeNs) + offset, 0))
    }
}
