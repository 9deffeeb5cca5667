import ArgumentParser
import DeskAudio

/// The `--backend` option's values.
enum BackendChoice: String, ExpressibleByArgument, CaseIterable {
    /// PipeWire when its daemon answers, else PulseAudio (or DESKAUDIO_BACKEND when set).
    case auto
    case pipewire
    case pulse

    /// The library's backend; nil leaves the choice to the library.
    var backend: AudioBackend? { AudioBackend(rawValue: rawValue) }

    static let help = ArgumentHelp("Audio server API.", valueName: "API")
}
