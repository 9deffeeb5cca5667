import CPulse

/// libpulse, loaded with dlopen when the PulseAudio backend is first used rather than linked:
/// a host on PipeWire never maps it, nor the libraries it pulls in.
enum PulseLibrary {
    /// Loads libpulse.so.0 once per process; throws `noServer` when it cannot be loaded (no
    /// PulseAudio client library means no PulseAudio server can be reached).
    static func load() throws(DeskAudioError) {
        var error = [CChar](repeating: 0, count: 256)
        guard deskaudio_pulse_load(&error, error.count) == 0 else {
            throw .noServer(error.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })
        }
    }
}

/// libpulse's functions, called as `pulse.pa_context_connect(...)`; valid once
/// `PulseLibrary.load()` has succeeded (every `PulseConnection` does it first).
var pulse: deskaudio_pulse_functions { deskaudio_pulse().pointee }
