import ArgumentParser
import DeskAudio

/// `deskaudio devices`: what can be captured, on which server API.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List sinks (app audio: their monitors) and sources (microphones); * marks defaults.",
        discussion: """
            Examples:
              deskaudio devices
              deskaudio devices --backend pulse
            """
    )

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    func run() throws {
        let service = AudioService()
        service.setBackend(backend.backend)
        let listing: (devices: [CaptureDevice], backend: AudioBackend)
        do throws(DeskAudioError) {
            listing = try service.devicesAndBackend()
        } catch {
            throw CLIFailure(error, doing: "listing devices")
        }
        print("backend: \(listing.backend.rawValue)")
        for (kind, heading) in [(CaptureDevice.Kind.sink, "sinks (app audio)"), (.source, "sources (microphones)")] {
            let devices = listing.devices.filter { $0.kind == kind }
            print("\(heading):\(devices.isEmpty ? " none" : "")")
            for device in devices {
                print("  \(device.isDefault ? "*" : " ") \(device.name)  (\(device.description))")
            }
        }
    }
}
