import Glibc

/// The audio server API a capture uses, by name.
public enum AudioBackend: String, Sendable, CaseIterable {
    /// PipeWire's native API (libpipewire-0.3).
    case pipewire
    /// PulseAudio's API (libpulse); also serves pipewire-pulse.
    case pulse

    /// The backend named by DESKAUDIO_BACKEND (pipewire or pulse), nil when unset or "auto";
    /// any other value is an error.
    static func fromEnvironment() throws(DeskAudioError) -> AudioBackend? {
        guard let value = getenv("DESKAUDIO_BACKEND").map({ String(cString: $0) }),
            !value.isEmpty, value != "auto"
        else { return nil }
        guard let backend = AudioBackend(rawValue: value) else {
            throw .invalidArgument("DESKAUDIO_BACKEND=\(value) is not auto, pipewire or pulse")
        }
        return backend
    }
}
