import CPulse
import Glibc

/// A module-null-sink of the library's, loaded through the PulseAudio API (a PulseAudio
/// daemon or pipewire-pulse), named `<prefix><pid>_<n>` so that a later start can tell whose
/// it was. A loaded module outlives the client that loaded it: `unloadLeftovers` removes
/// those of processes that are gone. Lock held on the connection for every call.
enum PulseNullSink {
    /// The names' starts: a host mute's sink, a virtual sink for a server without one, and
    /// the sink a remote microphone plays into (its monitor remapped into the microphone).
    static let prefixes = ["deskaudio_mute_", "deskaudio_virtual_", "deskaudio_remotemic_"]

    /// Loads a null sink `name` described as `description`; returns its module index.
    static func load(
        _ name: String, description: String, on connection: PulseConnection, deadline: UInt64
    ) throws(DeskAudioError) -> UInt32 {
        // PulseAudio's own null sink rewinds when a stream joins, which a monitor capture
        // hears as a glitch; pipewire-pulse ("PulseAudio (on PipeWire 1.4.2)") has no such
        // option.
        let isPipeWire = try PulseServerSnapshot.read(on: connection, deadline: deadline, withInputs: false).server
            .hasPrefix("PulseAudio (on PipeWire")
        let arguments =
            "sink_name=\(name) sink_properties=device.description=\(description)" + (isPipeWire ? "" : " norewinds=1")
        return try loadModule("module-null-sink", arguments, what: "the sink \(name)", on: connection, deadline: deadline)
    }

    /// Loads the module `module` with `arguments`; returns its index. `what` names it in
    /// messages.
    static func loadModule(
        _ module: String, _ arguments: String, what: String, on connection: PulseConnection, deadline: UInt64
    ) throws(DeskAudioError) -> UInt32 {
        final class Found { var module = UInt32.max }
        let found = Found()
        try connection.complete(
            pulse.pa_context_load_module(
                connection.context, module, arguments,
                { _, index, userData in Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().module = index },
                Unmanaged.passUnretained(found).toOpaque()),
            until: deadline, what: "loading \(what)")
        guard found.module != UInt32.max else {
            throw .streamFailed("PulseAudio refused \(what): \(connection.failureText)")
        }
        return found.module
    }

    /// Unloads the module `module` (best effort, until `deadline`).
    static func unload(_ module: UInt32, on connection: PulseConnection, deadline: UInt64) {
        try? connection.complete(
            pulse.pa_context_unload_module(connection.context, module, nil, nil), until: deadline, what: "unloading a sink")
    }

    /// Unloads the library's null sinks, and sources remapped from their monitors, that
    /// processes now gone left loaded (the server moves their streams to the default sink).
    static func unloadLeftovers(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) {
        final class Found { var modules: [UInt32] = [] }
        let found = Found()
        try connection.complete(
            pulse.pa_context_get_module_info_list(
                connection.context,
                { _, info, _, userData in
                    guard let info = info?.pointee, let name = info.name,
                        ["module-null-sink", "module-remap-source"].contains(String(cString: name)),
                        let argument = info.argument, let pid = PulseNullSink.owner(of: String(cString: argument)),
                        pid != getpid(), kill(pid, 0) != 0, errno == ESRCH
                    else { return }
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().modules.append(info.index)
                }, Unmanaged.passUnretained(found).toOpaque()),
            until: deadline, what: "the module list")
        for module in found.modules {
            try connection.complete(
                pulse.pa_context_unload_module(connection.context, module, nil, nil),
                until: deadline, what: "unloading a module left behind")
        }
    }

    /// The process id in a library sink's module argument ("sink_name=deskaudio_mute_<pid>_<n> …"),
    /// or in that of a source remapped from its monitor ("master=deskaudio_remotemic_<pid>_<n>.monitor").
    static func owner(of argument: String) -> Int32? {
        for prefix in prefixes {
            for key in ["sink_name=\(prefix)", "master=\(prefix)"] {
                guard let word = argument.split(separator: " ").first(where: { $0.hasPrefix(key) }) else { continue }
                return Int32(word.dropFirst(key.count).prefix { $0.isNumber })
            }
        }
        return nil
    }
}
