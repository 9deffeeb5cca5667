import Glibc

/// CLOCK_MONOTONIC, in nanoseconds: the clock of every capture time in AudioFrames.
public enum MonotonicClock {
    /// Nanoseconds since an arbitrary fixed point (boot, on Linux).
    @inline(__always)
    public static func nowNs() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
