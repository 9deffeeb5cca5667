/// A `ServerReport` read through libpulse's introspection (a PulseAudio daemon or
/// pipewire-pulse): the default sink's mute, volume and state, whether the default source is
/// a monitor, and the sink each sink input plays to.
enum PulseServerReport {
    /// Lock held: reads it within `deadline` (CLOCK_MONOTONIC ns).
    static func read(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> ServerReport {
        let server = try PulseServerSnapshot.read(on: connection, deadline: deadline, withInputs: true)
        let sink = server.sinks.first { $0.name == server.defaultSink }
        return ServerReport(
            server: server.server,
            defaultSink: sink.map {
                ServerReport.Sink(
                    name: $0.name, isMuted: $0.isMuted, volumePercent: $0.volumePercent, isSuspended: $0.isSuspended)
            },
            defaultSource: server.defaultSource,
            defaultSourceIsMonitor: server.sources.first { $0.name == server.defaultSource }?.isMonitor,
            playing: server.inputs.map { input in
                ServerReport.Playing(stream: input.stream, sink: server.sinks.first { $0.index == input.sink }?.name ?? "")
            })
    }
}
