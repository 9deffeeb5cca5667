import ArgumentParser
import DeskAudio

/// `deskaudio meter`: live levels of app audio and the microphone, and the gate's state.
struct MeterCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "meter",
        abstract: "Show live peak and RMS bars for app audio and the microphone, with the zero gate's state, until Ctrl-C.",
        discussion: """
            Levels are over the last second, in dBFS (a full-scale sine peaks at 0 and has \
            an RMS of -3). With --only, --exclude or --mute-host, each recorded application \
            gets a line of its own under app audio. The gate is open while frames go out, \
            closed after 8 s of digital silence, idle while the server delivers nothing.

            Examples:
              deskaudio meter                  # app audio
              deskaudio meter --app --mic
              deskaudio meter --only firefox vlc   # app audio, and each of the two
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
        do throws(DeskAudioError) { try service.setMeasuresAppLevels(true) } catch {
            throw CLIFailure(error, doing: "measuring levels per application")
        }
        try capture.start(service)
        var monitor = CaptureMonitor(service: service)
        monitor.show(until: seconds) { monitor in
            var lines: [String] = []
            if let app = monitor.stats.app {
                lines.append(meterLine("app", app.peakDBFS, app.rmsDBFS))
                for level in service.appLevels() {
                    lines.append(meterLine("  " + Self.label(level.stream), level.peakDBFS, level.rmsDBFS))
                }
            }
            if let mic = monitor.stats.mic { lines.append(meterLine("mic", mic.peakDBFS, mic.rmsDBFS)) }
            lines.append(
                "gate \(monitor.gate.rawValue)  sent \(monitor.stats.framesSent)  held \(monitor.stats.framesGated)"
                    + "  backend \(monitor.stats.backend?.rawValue ?? "-")")
            return lines
        }
        try? service.enable(mic: false, app: false)
    }

    private func meterLine(_ name: String, _ peak: Float, _ rms: Float) -> String {
        "\(name)  peak \(bar(peak)) \(pad(CaptureMonitor.decibels(peak)))"
            + "  rms \(bar(rms)) \(pad(CaptureMonitor.decibels(rms)))"
    }

    /// "NAME (pid P)" for a recorded stream, the node name when it gives no application name.
    static func label(_ stream: PlaybackStream) -> String {
        "\(stream.applicationName.isEmpty ? stream.nodeName : stream.applicationName) (pid \(stream.processID))"
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
