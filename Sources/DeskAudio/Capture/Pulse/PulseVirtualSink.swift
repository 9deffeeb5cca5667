import CPulse
import Glibc
import Synchronization

/// A sink for a PulseAudio server (or pipewire-pulse) that has none, a machine with no sound
/// card: a module-null-sink `deskaudio_virtual_<pid>_<n>` loaded while app audio captures,
/// so applications have somewhere to play. Unloaded when the capture stops; left loaded by
/// a killed process until the next capture start on that server (`PulseNullSink`).
final class PulseVirtualSink {
    private static let made = Atomic<Int>(0)
    /// Its sink name.
    let name: String
    private let module: UInt32

    private init(name: String, module: UInt32) {
        self.name = name
        self.module = module
    }

    /// Lock held: loads one if the server has no sink but the library's own; nil otherwise.
    static func loadIfNoSink(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> PulseVirtualSink? {
        let server = try PulseServerSnapshot.read(on: connection, deadline: deadline, withInputs: false)
        let deviceSinks = server.sinks.filter { sink in !PulseNullSink.prefixes.contains { sink.name.hasPrefix($0) } }
        guard deviceSinks.isEmpty else { return nil }
        let name = "\(PulseNullSink.prefixes[1])\(getpid())_\(made.add(1, ordering: .relaxed).newValue)"
        let module = try PulseNullSink.load(name, description: "DeskAudio-virtual-sink", on: connection, deadline: deadline)
        return PulseVirtualSink(name: name, module: module)
    }

    /// Unloads it, on a connection of its own (up to 1 s); the server moves what played there.
    func unload() {
        let deadline = LibraryClock.system.deadline(afterMilliseconds: 1000)
        guard let connection = try? PulseConnection(deadline: deadline) else { return }
        connection.lock()
        PulseNullSink.unload(module, on: connection, deadline: deadline)
        connection.unlock()
        connection.close()
    }
}
