import CPulse
import Glibc

/// What a PulseAudio server (or pipewire-pulse) has to capture from, read once through
/// libpulse's introspection: its sinks, its sources that are not monitors, and the default
/// of each.
enum PulseDevices {
    /// Lock held: lists the devices within `deadline` (CLOCK_MONOTONIC ns).
    static func read(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> [CaptureDevice] {
        let found = Found()
        let userData = Unmanaged.passUnretained(found).toOpaque()
        try connection.complete(
            pulse.pa_context_get_server_info(
                connection.context,
                { _, info, userData in
                    let found = Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue()
                    found.defaultSink = info?.pointee.default_sink_name.map { String(cString: $0) }
                    found.defaultSource = info?.pointee.default_source_name.map { String(cString: $0) }
                }, userData),
            until: deadline, what: "the server info")
        try connection.complete(
            pulse.pa_context_get_sink_info_list(
                connection.context,
                { _, sink, _, userData in
                    guard let sink = sink?.pointee else { return }
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().add(
                        .sink, name: sink.name, description: sink.description)
                }, userData),
            until: deadline, what: "the sink list")
        try connection.complete(
            pulse.pa_context_get_source_info_list(
                connection.context,
                { _, source, _, userData in
                    guard let source = source?.pointee, source.monitor_of_sink == UInt32.max else { return }
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().add(
                        .source, name: source.name, description: source.description)
                }, userData),
            until: deadline, what: "the source list")
        return found.devices.map { device in
            var marked = device
            marked.isDefault = device.name == (device.kind == .sink ? found.defaultSink : found.defaultSource)
            return marked
        }
    }

    /// What the introspection callbacks collect (main loop thread, lock held by the waiter).
    private final class Found {
        var devices: [CaptureDevice] = []
        var defaultSink: String?
        var defaultSource: String?

        func add(_ kind: CaptureDevice.Kind, name: UnsafePointer<CChar>?, description: UnsafePointer<CChar>?) {
            guard let name else { return }
            let text = String(cString: name)
            guard !text.hasPrefix(PulseHostMute.sinkNamePrefix) else { return }  // a mute's, not a device
            devices.append(
                CaptureDevice(
                    kind: kind, name: text, description: description.map { String(cString: $0) } ?? text,
                    isDefault: false))
        }
    }
}
