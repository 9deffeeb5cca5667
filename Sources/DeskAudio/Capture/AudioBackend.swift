import Glibc

/// The audio server API a capture stream uses.
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

/// A running capture stream of either backend: it writes 48 kHz stereo floats into a
/// ring and wakes the worker for every buffer.
protocol CaptureStream: AnyObject {
    /// Stops capture; once it returns, nothing more is written to the ring.
    func stop()
    /// True once the server dropped the stream or went away; the stream must be reopened.
    var hasFailed: Bool { get }
}

extension AudioBackend {
    /// Runs `body` on `backend`; for automatic choice (nil), on PipeWire, and on PulseAudio
    /// when no PipeWire daemon answers. With neither, the error names both failures.
    static func run<T>(
        on backend: AudioBackend?, _ body: (AudioBackend) throws(DeskAudioError) -> T
    ) throws(DeskAudioError) -> T {
        if let backend { return try body(backend) }
        do throws(DeskAudioError) {
            return try body(.pipewire)
        } catch {
            guard case .noServer(let pipewireReason) = error else { throw error }
            do throws(DeskAudioError) {
                return try body(.pulse)
            } catch {
                guard case .noServer(let pulseReason) = error else { throw error }
                throw .noServer("neither PipeWire nor PulseAudio answered (\(pipewireReason); \(pulseReason))")
            }
        }
    }
}
