import Glibc

/// Live status on stderr: redrawn in place about ten times a second on a terminal; on a
/// pipe or file, written as plain lines once a second.
struct StatusDisplay {
    /// True when stderr is a terminal.
    let isTerminal = isatty(STDERR_FILENO) == 1
    private var linesShown = 0
    private var lastPlainSecond = -1

    /// Shows `lines` as of `elapsedSeconds` into the run.
    mutating func show(_ lines: [String], elapsedSeconds: Double) {
        if isTerminal {
            var text = linesShown > 0 ? "\u{1B}[\(linesShown)A" : ""
            for line in lines { text += "\r\u{1B}[K" + line + "\n" }
            write(text)
            linesShown = lines.count
        } else if Int(elapsedSeconds) > lastPlainSecond {
            lastPlainSecond = Int(elapsedSeconds)
            write(lines.joined(separator: "  ") + "\n")
        }
    }

    /// Prints `notes` once, above the status (which is drawn again below them).
    mutating func note(_ notes: [String]) {
        guard !notes.isEmpty else { return }
        var text = isTerminal && linesShown > 0 ? "\u{1B}[\(linesShown)A" : ""
        for note in notes { text += (isTerminal ? "\r\u{1B}[K" : "") + "warning: " + note + "\n" }
        write(text)
        linesShown = 0
    }

    private func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = Glibc.write(STDERR_FILENO, &bytes, bytes.count)
    }
}
