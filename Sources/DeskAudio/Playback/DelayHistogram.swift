/// Delays counted in 1 ms steps (0 to 1 s; longer ones in the last step), from which
/// percentiles are read: how long frames waited between arriving and being played. `add`
/// allocates nothing. One thread at a time.
struct DelayHistogram {
    private static let steps = 1001
    private let counts: UnsafeMutableBufferPointer<UInt64>
    private(set) var total: UInt64 = 0

    init() {
        counts = .zeroed(DelayHistogram.steps)
    }

    /// Frees the counts; the histogram is not used after.
    func deallocate() { counts.deallocate() }

    /// Counts one delay.
    mutating func add(_ nanoseconds: UInt64) {
        counts[Int(min(nanoseconds / MonotonicClock.nanosecondsPerMillisecond, UInt64(DelayHistogram.steps - 1)))] += 1
        total += 1
    }

    /// The delay, in whole ms, that `fraction` (0...1) of those counted did not exceed; 0
    /// before any.
    func percentileMs(_ fraction: Double) -> Int {
        guard total > 0 else { return 0 }
        let wanted = max(1, UInt64((Double(total) * fraction).rounded(.up)))
        var seen: UInt64 = 0
        for step in 0..<DelayHistogram.steps {
            seen += counts[step]
            if seen >= wanted { return step }
        }
        return DelayHistogram.steps - 1
    }
}
