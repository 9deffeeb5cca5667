import CPulse

/// A `ServerReport` read through libpulse's introspection (a PulseAudio daemon or
/// pipewire-pulse): server info, the sinks (mute, volume, state), the default source, the
/// sink inputs and the sink of each.
enum PulseServerReport {
    /// Lock held: reads it within `deadline` (CLOCK_MONOTONIC ns).
    static func read(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> ServerReport {
        let found = Found()
        let userData = Unmanaged.passUnretained(found).toOpaque()
        try connection.complete(
            pulse.pa_context_get_server_info(
                connection.context,
                { _, info, userData in
                    guard let info = info?.pointee else { return }
                    let found = Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue()
                    found.server = [info.server_name, info.server_version].compactMap { $0.map { String(cString: $0) } }
                        .joined(separator: " ")
                    found.defaultSink = info.default_sink_name.map { String(cString: $0) }
                    found.defaultSource = info.default_source_name.map { String(cString: $0) }
                }, userData),
            until: deadline, what: "the server info")
        try connection.complete(
            pulse.pa_context_get_sink_info_list(
                connection.context,
                { _, sink, _, userData in
                    guard let sink = sink?.pointee, let name = sink.name else { return }
                    let channels = Int(sink.volume.channels)
                    let total = withUnsafeBytes(of: sink.volume.values) { raw in
                        raw.bindMemory(to: UInt32.self).prefix(channels).reduce(0) { $0 + Int($1) }
                    }
                    let norm = 0x10000  // PA_VOLUME_NORM: 100 %
                    let percent = channels > 0 ? (total * 100 / channels + norm / 2) / norm : 0
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().sinks[sink.index] = ServerReport.Sink(
                        name: String(cString: name), isMuted: sink.mute != 0, volumePercent: percent,
                        isSuspended: sink.state == PA_SINK_SUSPENDED)
                }, userData),
            until: deadline, what: "the sink list")
        try connection.complete(
            pulse.pa_context_get_source_info_list(
                connection.context,
                { _, source, _, userData in
                    guard let source = source?.pointee, let name = source.name else { return }
                    let found = Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue()
                    if String(cString: name) == found.defaultSource {
                        found.defaultSourceIsMonitor = source.monitor_of_sink != UInt32.max
                    }
                }, userData),
            until: deadline, what: "the source list")
        try connection.complete(
            pulse.pa_context_get_sink_input_info_list(
                connection.context,
                { _, input, _, userData in
                    guard let input = input?.pointee else { return }
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().inputs.append(
                        (PulsePlaybackStreams.stream(from: input), input.sink))
                }, userData),
            until: deadline, what: "the sink input list")
        return ServerReport(
            server: found.server, defaultSink: found.sinks.values.first { $0.name == found.defaultSink },
            defaultSource: found.defaultSource, defaultSourceIsMonitor: found.defaultSourceIsMonitor,
            playing: found.inputs.map { ServerReport.Playing(stream: $0.0, sink: found.sinks[$0.1]?.name ?? "") })
    }

    /// What the introspection callbacks collect (main loop thread, lock held by the waiter).
    private final class Found {
        var server = ""
        var defaultSink: String?
        var defaultSource: String?
        var defaultSourceIsMonitor: Bool?
        var sinks: [UInt32: ServerReport.Sink] = [:]
        var inputs: [(PlaybackStream, UInt32)] = []
    }
}
