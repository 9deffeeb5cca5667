/// Which backend a capture's work goes to: the one rule. The host asks for a backend or for
/// automatic choice (`requested`, nil: DESKAUDIO_BACKEND's, else automatic); while streams run
/// they are on one server (`inUse`). Any thread reads or sets either without a lock.
final class BackendChoice: Sendable {
    /// The backend asked for with setBackend (nil: DESKAUDIO_BACKEND's, else automatic).
    let requested = BackendSlot()
    /// The backend the running streams use, nil while stopped.
    let inUse = BackendSlot()

    /// The backend a stream opened after its server went away may use: the one asked for,
    /// else DESKAUDIO_BACKEND's; nil is automatic (under it, a capture whose PipeWire daemon
    /// is gone may go on through PulseAudio). Throws for a DESKAUDIO_BACKEND that names none.
    func allowed() throws(DeskAudioError) -> AudioBackend? {
        if let backend = requested.value { return backend }
        return try AudioBackend.fromEnvironment()
    }

    /// The backend for everything else (a start, a query, a device change): the one in use,
    /// so a running capture's streams and questions stay on one server, else `allowed()`.
    func current() throws(DeskAudioError) -> AudioBackend? {
        if let backend = inUse.value { return backend }
        return try allowed()
    }
}
