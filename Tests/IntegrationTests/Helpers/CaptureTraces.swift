import Foundation
import TestSupport

/// The library's timing traces (DESKAUDIO_TRACE) of the captures started between `init()` and
/// `stop()`, for a failed tone check's message: where in a stream the server handed buffers of
/// exact zeros inside the sound. Suites run one test at a time (`--no-parallel`), so the
/// setting is this test's.
struct CaptureTraces {
    private let directory: TemporaryDirectory

    /// Turns the traces on, for the captures started until `stop()`.
    init() throws {
        directory = try TemporaryDirectory(prefix: "deskaudio-trace")
        setenv("DESKAUDIO_TRACE", directory.url.path, 1)
    }

    func stop() { unsetenv("DESKAUDIO_TRACE") }

    /// For each trace, its runs of at least `atLeast` all-zero buffers (PipeWire) or fragments
    /// (PulseAudio) between its first and last buffer of sound: "trace-…: records 310-363 (54),
    /// ticks 39680-46464, no break" (the graph's position went on a quantum a buffer: the
    /// server handed zeros in time) or "…, broken" (it jumped: cycles missed).
    func zeroRunsInsideTheSound(atLeast: Int = 2) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? []
        return files.sorted().flatMap { file -> [String] in
            guard let text = try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8) else { return [] }
            return TraceLine.zeroRunsInsideTheSound(of: text, atLeast: atLeast).map { "\(file): \($0)" }
        }
    }
}
