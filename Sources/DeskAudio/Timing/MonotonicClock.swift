import Glibc

/// CLOCK_MONOTONIC, in nanoseconds: the clock of every capture time in AudioFrames. The
/// library reads it only through `LibraryClock`; its units are spelled here once.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (boot, on Linux).
    @inline(__always)
    public static func nowNs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * nanosecondsPerSecond + UInt64(now.tv_nsec)
    }

    /// Nanoseconds in a second and in a millisecond: the clock's units, spelled once.
    public static let nanosecondsPerSecond: UInt64 = 1_000_000_000
    public static let nanosecondsPerMillisecond: UInt64 = 1_000_000

    /// How long `samples` last at `rate` Hz (48 kHz unless given), in nanoseconds.
    @inline(__always)
    public static func nanoseconds(ofSamples samples: UInt64, rate: Int = AudioFormat.sampleRate) -> UInt64 {
        samples * nanosecondsPerSecond / UInt64(rate)
    }
}
