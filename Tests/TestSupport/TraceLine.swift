/// One line of the library's timing trace (`TimingTrace`, DESKAUDIO_TRACE): its words, the
/// first naming what it records ("pw", "frag", "end", …), and its `key=value` fields.
public struct TraceLine {
    public let words: [Substring]
    public let fields: [String: String]

    /// The lines of a trace's `text`, its comments left out.
    public static func lines(of text: String) -> [TraceLine] {
        text.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(TraceLine.init)
    }

    public init(_ line: Substring) {
        words = line.split(separator: " ")
        fields = Dictionary(
            words.dropFirst().compactMap { word -> (String, String)? in
                let parts = word.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { $1 })
    }

    /// What the line records: its first word.
    public var kind: Substring? { words.first }

    /// The field `key` as a number; nil where it is missing or not one.
    public func number(_ key: String) -> Int64? { fields[key].flatMap { Int64($0) } }

    /// The field `key` as a number, 0 where it is missing or not one.
    public func int(_ key: String) -> Int64 { number(key) ?? 0 }
}

extension TraceLine {
    /// The runs of at least `atLeast` all-zero buffers (PipeWire, "pw") or fragments (PulseAudio,
    /// "frag") in a trace's `text` between its first and last of sound, as
    /// `CaptureTraces.zeroRunsInsideTheSound` words them.
    public static func zeroRunsInsideTheSound(of text: String, atLeast: Int) -> [String] {
        let records = TraceLine.lines(of: text).filter { $0.kind == "pw" || $0.kind == "frag" }
            .map { line in (zero: line.int("zero") == 1, ticks: line.number("ticks").map { Int($0) }, samples: line.number("n").map { Int($0) }) }
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
