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
            return Self.zeroRuns(in: text, atLeast: atLeast).map { "\(file): \($0)" }
        }
    }

    /// The runs in one trace's `text` (TimingTrace's lines).
    static func zeroRuns(in text: String, atLeast: Int) -> [String] {
        let field = { (line: Substring, name: String) -> Substring? in
            line.split(separator: " ").first { $0.hasPrefix(name + "=") }?.dropFirst(name.count + 1)
        }
        let records = text.split(separator: "\n").filter { $0.hasPrefix("pw ") || $0.hasPrefix("frag ") }
            .map { line in (zero: field(line, "zero") == "1", ticks: field(line, "ticks").flatMap { Int($0) }, samples: field(line, "n").flatMap { Int($0) }) }
        guard let first = records.firstIndex(where: { !$0.zero }), let last = records.lastIndex(where: { !$0.zero }) else { return [] }
        var runs: [String] = []
        var start: Int?
        for index in first...last {
            if records[index].zero {
                if start == nil { start = index }
                continue
            }
            if let from = start, index - from >= atLeast {
                let span = records[from..<index]
                let ticks = span.compactMap(\.ticks)
                let steps = zip(span, span.dropFirst()).allSatisfy { a, b in
                    guard let t0 = a.ticks, let t1 = b.ticks, let n = a.samples else { return true }
                    return t1 - t0 == n
                }
                let position = ticks.isEmpty ? "" : ", ticks \(ticks[0])-\(ticks[ticks.count - 1]), \(steps ? "no break" : "broken")"
                runs.append("records \(from)-\(index - 1) (\(index - from))\(position)")
            }
            start = nil
        }
        return runs
    }
}
