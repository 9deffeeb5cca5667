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

    /// App audio unless only the microphone was asked for (a named sink implies app audio).
    var captureApp: Bool { app || !mic }

    /// Chooses backend and device on `service` and starts capture.
    func start(_ service: AudioService) throws {
        service.setBackend(backend.backend)
        var micWanted = mic
        var appWanted = captureApp
        do throws(DeskAudioError) {
            if let device {
                let devices = try service.devices()
                guard let chosen = devices.first(where: { $0.name == device }) else {
                    throw DeskAudioError.noDevice("the audio server has no sink or source named \(device)")
                }
                let isMic = chosen.kind == .source
                if isMic { micWanted = true } else { appWanted = true }
                if isMic && !app { appWanted = false }
                try service.setDevice(device, forMic: isMic)
            }
            try service.enable(mic: micWanted, app: appWanted)
        } catch {
            throw CLIFailure(error, doing: "starting capture")
        }
    }
}
