/// One stream an application plays, as the audio server lists it.
public struct PlaybackStream: Sendable, Equatable {
    /// The server's id of the stream (a PipeWire node id, a PulseAudio sink input index).
    public var id: UInt32
    /// `application.name`, as the application gave it ("" if none).
    public var applicationName: String
    /// `application.process.binary` ("" if unknown).
    public var binary: String
    /// `application.process.id`, 0 if unknown.
    public var processID: Int32
    /// The stream's node name ("" if none).
    public var nodeName: String
    /// True while the stream is running (sound flowing), false while paused or idle.
    public var isRunning: Bool

    /// A stream with every field given.
    public init(
        id: UInt32, applicationName: String, binary: String, processID: Int32, nodeName: String, isRunning: Bool
    ) {
        self.id = id
        self.applicationName = applicationName
        self.binary = binary
        self.processID = processID
        self.nodeName = nodeName
        self.isRunning = isRunning
    }

    /// True when `name` names this stream: its application name, binary or node name
    /// (ignoring case), or its process id.
    public func answers(to name: String) -> Bool {
        let wanted = name.lowercased()
        if let pid = Int32(name), pid == processID, pid != 0 { return true }
        return [applicationName, binary, nodeName].contains { !$0.isEmpty && $0.lowercased() == wanted }
    }
}
