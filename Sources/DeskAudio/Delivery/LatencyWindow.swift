/// Mean and maximum of per-frame latencies over windows of one second of frames (100),
/// kept by the worker. `add` allocates nothing.
struct LatencyWindow {
    private static let framesPerWindow: UInt64 = 100
    private var count: UInt64 = 0
    private var sum: UInt64 = 0
    private var longest: UInt64 = 0

    /// Adds one frame's latency; at the end of a window, returns its mean and maximum.
    mutating func add(_ nanoseconds: UInt64) -> (meanNs: UInt64, maxNs: UInt64)? {
        count += 1
        sum &+= nanoseconds
        longest = max(longest, nanoseconds)
        guard count == LatencyWindow.framesPerWindow else { return nil }
        defer { self = LatencyWindow() }
        return (sum / count, longest)
    }
}
