import ArgumentParser
import DeskAudio

/// The sources to capture, shared by `record` and `meter`.
struct CaptureOptions: ParsableArguments {
    @Flag(help: "Capture app audio: what the machine plays (the default when neither source is named).")
    var app = false

    @Flag(help: "Capture the microphone (the default source).")
    var mic = false

    @Option(help: ArgumentHelp(
        "Capture this sink's monitor or this source instead of the default; `deskaudio devices` lists names.",
        valueName: "NAME"))
    var device: String?

    @Option(parsing: .upToNextOption, help: ArgumentHelp(
        "App audio from these applications only (name, binary, node name or pid; `deskaudio apps` lists them).",
        valueName: "APP"))
    var only: [String] = []

    @Option(parsing: .upToNextOption, help: ArgumentHelp(
        "App audio from every application but these.", valueName: "APP"))
    var exclude: [String] = []

    @Flag(help: "With --only or --exclude: record this process's own playback too (left out by default).")
    var includeSelf = false

    @Flag(help: ArgumentHelp(
        "Keep what is recorded off this machine's speakers while capturing (the default sink is left alone). "
            + "Without --only/--exclude: every application but this one, wherever it plays."))
    var muteHost = false

    @Flag(help: ArgumentHelp(
        "On a server with no sink at all (no sound card), create a virtual one while capturing, so "
            + "applications have somewhere to play."))
    var ensureSink = false

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    @Option(help: ArgumentHelp(
        "On PipeWire, ask the graph for a quantum of this many samples (32-480 at 48 kHz) instead of the "
            + "frame's length: less latency, every application on the server waking more often.",
        valueName: "SAMPLES"))
    var pipewireQuantum: Int?

    /// The applications asked for, nil for the default sink's whole monitor.
    var apps: AppSelection? {
        if !only.isEmpty { return AppSelection(mode: .only, names: only, includesOwnProcess: includeSelf) }
        if !exclude.isEmpty { return AppSelection(mode: .allExcept, names: exclude, includesOwnProcess: includeSelf) }
        return nil
    }

    func validate() throws {
        if !only.isEmpty && !exclude.isEmpty { throw ValidationError("--only and --exclude cannot be used together") }
        if includeSelf && only.isEmpty && exclude.isEmpty {
            throw ValidationError("--include-self goes with --only or --exclude")
        }
        let quanta = AudioService.pipeWireQuantumRange
        if let pipewireQuantum, !quanta.contains(pipewireQuantum) {
            throw ValidationError("--pipewire-quantum must be \(quanta.lowerBound) to \(quanta.upperBound) samples")
        }
        if (apps != nil || muteHost) && device != nil {
            throw ValidationError("--only/--exclude/--mute-host record applications, not a --device")
        }
    }

    /// Chooses backend and device on `service` and starts capture: app audio unless only
    /// the microphone was asked for; a named device adds its own kind (a sink's monitor is
    /// app audio, a source is a microphone).
    func start(_ service: AudioService) throws {
        service.setBackend(backend.backend)
        service.setEnsuresSink(ensureSink)
        var micWanted = mic
        var appWanted = app || !mic
        do throws(DeskAudioError) {
            try service.setPipeWireQuantum(samples: pipewireQuantum)
            if let device {
                guard let chosen = try service.devices().first(where: { $0.name == device }) else {
                    throw DeskAudioError.noDevice("the audio server has no sink or source named \(device)")
                }
                let isMic = chosen.kind == .source
                micWanted = mic || isMic
                appWanted = app || !isMic
                try service.setDevice(device, forMic: isMic)
            }
            if let apps {
                appWanted = true
                try service.setApps(apps)
            }
            if muteHost {
                appWanted = true
                try service.setMuteHost(true)
            }
            try service.enable(mic: micWanted, app: appWanted)
        } catch {
            throw CLIFailure(error, doing: "starting capture")
        }
    }
}
