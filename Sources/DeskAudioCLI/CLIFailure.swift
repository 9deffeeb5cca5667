import DeskAudio

/// An error the tool reports as one line and exit status 1.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// Says what failed, in words a user can act on, for an error from the library.
    init(_ error: DeskAudioError, doing action: String) {
        switch error {
        case .noServer(let reason):
            self.init("no audio server answered while \(action): \(reason). Start PipeWire or PulseAudio, or check XDG_RUNTIME_DIR.")
        case .noDevice(let reason):
            self.init("\(reason). `deskaudio devices` lists the names.")
        default:
            self.init("\(action) failed: \(error.message)")
        }
    }
}
