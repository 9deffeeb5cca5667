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

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    /// Chooses backend and device on `service` and starts capture: app audio unless only
    /// the microphone was asked for; a named device adds its own kind (a sink's monitor is
    /// app audio, a source is a microphone).
    func start(_ service: AudioService) throws {
        service.setBackend(backend.backend)
        var micWanted = mic
        var appWanted = app || !mic
        do throws(DeskAudioError) {
            if let device {
                guard let chosen = try service.devices().first(where: { $0.name == device }) else {
                    throw DeskAudioError.noDevice("the audio server has no sink or source named \(device)")
                }
                let isMic = chosen.kind == .source
                micWanted = mic || isMic
                appWanted = app || !isMic
                try service.setDevice(device, forMic: isMic)
            }
            try service.enable(mic: micWanted, app: appWanted)
        } catch {
            throw CLIFailure(error, doing: "starting capture")
        }
    }
}
