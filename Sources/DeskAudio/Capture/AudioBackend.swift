import Glibc

/// The audio server API a capture uses, by name.
public enum AudioBackend: String, Sendable, CaseIterable {
    /// PipeWire's native API (libpipewire-0.3).
    case pipewire
    /// PulseAudio's API (libpulse); also serves pipewire-pulse.
    case pulse

    /// The server it talks to, for messages: "PipeWire", "PulseAudio".
    public var serverName: String { self == .pipewire ? "PipeWire" : "PulseAudio" }

    /// Automatic choice's order: PipeWire's native API first, PulseAudio's when no PipeWire answers.
    static let automaticOrder: [AudioBackend] = [.pipewire, .pulse]

    /// The choice `name` makes: "pipewire" or "pulse" that backend, "auto" or "" automatic
    /// (nil); anything else an `.invalidArgument` error that starts with `described` (how
    /// the caller got the name: `backend "oss"`, `DESKAUDIO_BACKEND=oss`).
    public static func choice(named name: String, described: String) throws(DeskAudioError) -> AudioBackend? {
        if name.isEmpty || name == "auto" { return nil }
        guard let backend = AudioBackend(rawValue: name) else {
            throw .invalidArgument("\(described) is not auto, pipewire or pulse")
        }
        return backend
    }

    /// The backend named by DESKAUDIO_BACKEND (pipewire or pulse), nil when unset or "auto";
    /// any other value is an error.
    static func fromEnvironment() throws(DeskAudioError) -> AudioBackend? {
        guard let value = getenv("DESKAUDIO_BACKEND") else { return nil }
        let name = String(cString: value)
        return try choice(named: name, described: "DESKAUDIO_BACKEND=\(name)")
    }
}
