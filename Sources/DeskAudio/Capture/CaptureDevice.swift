/// A device audio can be captured from, as the audio server lists it.
public struct CaptureDevice: Sendable, Equatable {
    /// What a device is.
    public enum Kind: Int32, Sendable, CaseIterable {
        /// An output: capturing it records its monitor, what is played to it (app audio).
        case sink = 1
        /// An input that is not a monitor: a microphone.
        case source = 2
    }

    /// Sink or source.
    public var kind: Kind
    /// The server's stable name (`node.name` on PipeWire, the sink or source name on
    /// PulseAudio), as capture by name takes it.
    public var name: String
    /// A name for people.
    public var description: String
    /// True for the server's default sink, or default source.
    public var isDefault: Bool

    /// A device with every field given.
    public init(kind: Kind, name: String, description: String, isDefault: Bool) {
        self.kind = kind
        self.name = name
        self.description = description
        self.isDefault = isDefault
    }
}

extension CaptureDevice {
    /// The devices of the server `backend` talks to, read once (at most `timeoutMs`).
    static func list(on backend: AudioBackend, timeoutMs: Int = 3000) throws(DeskAudioError) -> [CaptureDevice] {
        switch backend {
        case .pipewire:
            let connection = try PipeWireConnection(name: "deskaudio-devices", realTime: false)
            connection.lock()
            defer { connection.unlock() }
            var deadline = connection.deadline(afterMilliseconds: timeoutMs)
            return try PipeWireDevices.read(on: connection, deadline: &deadline).devices
        case .pulse:
            let deadline = MonotonicClock.nowNs() + UInt64(timeoutMs) * 1_000_000
            let connection = try PulseConnection(deadline: deadline)
            connection.lock()
            defer { connection.unlock() }
            return try PulseDevices.read(on: connection, deadline: deadline)
        }
    }
}
