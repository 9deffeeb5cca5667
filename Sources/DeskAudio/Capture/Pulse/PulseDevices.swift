/// What a PulseAudio server (or pipewire-pulse) has to capture from, read once through
/// libpulse's introspection: its sinks, its sources that are not monitors, and the default
/// of each.
enum PulseDevices {
    /// Lock held: lists the devices within `deadline` (CLOCK_MONOTONIC ns).
    static func read(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> [CaptureDevice] {
        let server = try PulseServerSnapshot.read(on: connection, deadline: deadline, withInputs: false)
        // A mute's sink is the library's, not a device.
        let sinks = server.sinks.filter { !$0.name.hasPrefix(PulseHostMute.sinkNamePrefix) }.map {
            CaptureDevice(
                kind: .sink, name: $0.name, description: $0.description, isDefault: $0.name == server.defaultSink,
                channels: $0.channels)
        }
        let sources = server.sources.filter { !$0.isMonitor }.map {
            CaptureDevice(
                kind: .source, name: $0.name, description: $0.description, isDefault: $0.name == server.defaultSource)
        }
        return sinks + sources
    }
}
