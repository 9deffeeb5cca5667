import Foundation

/// The measurement lane's one report: a figure that a loaded machine bends (dropouts under
/// load, latency percentiles, time steps of a real server's clock, CPU) is written here, one
/// tab-separated line each (test, figure, value, unit, gross budget, verdict), to the file
/// `DESKAUDIO_REPORT` names (scripts/test prints its path at the end), and printed. A figure
/// fails only past its gross budget, stated beside it: a test's failure means a bug, not a
/// busy machine.
public enum MeasurementReport {
    /// The gross budget of a figure.
    public enum Budget: Sendable, CustomStringConvertible {
        /// At most this much.
        case atMost(Double)
        /// At least this much.
        case atLeast(Double)

        /// Whether `value` is within it.
        public func admits(_ value: Double) -> Bool {
            switch self {
            case .atMost(let limit): value <= limit
            case .atLeast(let limit): value >= limit
            }
        }

        public var description: String {
            switch self {
            case .atMost(let limit): "<= \(limit)"
            case .atLeast(let limit): ">= \(limit)"
            }
        }
    }

    private static let lock = NSLock()

    /// Writes `figure` of `test` (its value in `unit`, judged against `budget`, or not judged
    /// at all when `judged` is false: under a sanitizer, which slows every thread 2–15 times)
    /// to `reportPath` and returns whether it is within the budget (always true when not judged).
    @discardableResult
    public static func record(
        _ figure: String, _ value: Double, unit: String, budget: Budget, test: String, judged: Bool = true,
        reportPath: String? = ProcessInfo.processInfo.environment["DESKAUDIO_REPORT"]
    ) -> Bool {
        let within = budget.admits(value)
        let verdict = !judged ? "not judged" : within ? "within" : "PAST BUDGET"
        let line = [test, figure, String(format: "%.4g", value), unit, budget.description, verdict].joined(separator: "\t")
        print("measured: \(line)")
        if let path = reportPath {
            lock.withLock {
                let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
                guard descriptor >= 0 else { return }
                defer { close(descriptor) }
                let bytes = Array((line + "\n").utf8)
                _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            }
        }
        return within || !judged
    }
}
