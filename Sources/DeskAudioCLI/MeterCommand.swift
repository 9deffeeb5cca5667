import ArgumentParser
import DeskAudio

/// `deskaudio meter`: live levels of app audio and the microphone, and the gate's state.
struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Show live peak and RMS bars for app audio and the microphone, with the zero gate's state, until Ctrl-C.",
        discussion: """
            Levels are over the last second, in dBFS (a full-scale sine peaks at 0 and has \
            an RMS of -3). The gate is open while frames go out, closed after 8 s of digital \
            silence, idle while the server delivers nothing.

            Examples:
              deskaudio meter                  # app audio
              deskaudio meter --app --mic
              deskaudio meter --mic --seconds 5 > levels.txt
            """
    )

    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
    }

    func run() throws {
        InterruptSignal.install()
        let service = AudioService()
        service.setFrameHandler { _ in }  // frames are encoded and counted as for a host
        try capture.start(service)
        var monitor = CaptureMonitor(service: service)
        var display = StatusDisplay()
        while !InterruptSignal.wasRaised {
            monitor.poll()
            var lines: [String] = []
            if let app = monitor.stats.app { lines.append(meterLine("app", app)) }
            if let mic = monitor.stats.mic { lines.append(meterLine("mic", mic)) }
            lines.append(
                "gate \(monitor.gate.rawValue)  sent \(monitor.stats.framesSent)  held \(monitor.stats.framesGated)"
                    + "  backend \(monitor.stats.backend?.rawValue ?? "-")")
            display.note(monitor.warnings)
            display.show(lines, elapsedSeconds: monitor.elapsedSeconds)
            if let seconds, monitor.elapsedSeconds >= seconds { break }
        }
        try? service.enable(mic: false, app: false)
    }

    private func meterLine(_ name: String, _ level: CaptureStats.SourceLevel) -> String {
        "\(name)  peak \(bar(level.peakDBFS)) \(pad(CaptureMonitor.decibels(level.peakDBFS)))"
            + "  rms \(bar(level.rmsDBFS)) \(pad(CaptureMonitor.decibels(level.rmsDBFS)))"
    }

    /// 24 cells from -60 dBFS to 0.
    private func bar(_ decibels: Float) -> String {
        let filled = max(0, min(24, Int(((decibels + 60) / 60 * 24).rounded())))
        return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: 24 - filled) + "]"
    }

    private func pad(_ text: String) -> String {
        text + String(repeating: " ", count: max(0, 11 - text.count))
    }
}
