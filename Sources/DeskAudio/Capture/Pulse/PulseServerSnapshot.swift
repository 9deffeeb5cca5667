import CPulse

/// A PulseAudio server (or pipewire-pulse) read once through libpulse's introspection: its
/// name and version, defaults, sinks, sources and, if asked for, sink inputs. What the
/// device list and the server report are made from.
struct PulseServerSnapshot {
    /// A sink as introspection gives it.
    struct Sink {
        var index: UInt32
        var name: String
        var description: String
        var isMuted: Bool
        /// The mean of its channels' volumes, in percent.
        var volumePercent: Int
        var isSuspended: Bool
        /// The name of its monitor source, if it has one.
        var monitorSource: String?
        /// Its channels.
        var channels: Int = 0
    }

    /// A source as introspection gives it.
    struct Source {
        var name: String
        var description: String
        /// True for a sink's monitor.
        var isMonitor: Bool
    }

    /// "PulseAudio (on PipeWire 0.3.65) 15.0.0".
    var server = ""
    var defaultSink: String?
    var defaultSource: String?
    var sinks: [Sink] = []
    var sources: [Source] = []
    /// Each sink input and the index of its sink (empty unless asked for).
    var inputs: [(stream: PlaybackStream, sink: UInt32)] = []

    /// Lock held: reads it within `deadline` (CLOCK_MONOTONIC ns); the sink inputs too if `withInputs`.
    static func read(on connection: PulseConnection, deadline: UInt64, withInputs: Bool) throws(DeskAudioError)
        -> PulseServerSnapshot
    {
        let box = Box()
        let userData = Unmanaged.passUnretained(box).toOpaque()
        try connection.complete(
            pulse.pa_context_get_server_info(
                connection.context,
                { _, info, userData in
                    guard let info = info?.pointee else { return }
                    let box = Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue()
                    box.value.server = [info.server_name, info.server_version].compactMap { $0.map { String(cString: $0) } }
                        .joined(separator: " ")
                    box.value.defaultSink = info.default_sink_name.map { String(cString: $0) }
                    box.value.defaultSource = info.default_source_name.map { String(cString: $0) }
                }, userData),
            until: deadline, what: "the server info")
        try connection.complete(
            pulse.pa_context_get_sink_info_list(
                connection.context,
                { _, sink, _, userData in
                    guard let sink = sink?.pointee, let name = sink.name.map({ String(cString: $0) }) else { return }
                    Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue().value.sinks.append(
                        Sink(
                            index: sink.index, name: name, description: sink.description.map { String(cString: $0) } ?? name,
                            isMuted: sink.mute != 0, volumePercent: PulseServerSnapshot.percent(of: sink.volume),
                            isSuspended: sink.state == PA_SINK_SUSPENDED,
                            monitorSource: sink.monitor_source_name.map { String(cString: $0) },
                            channels: Int(sink.sample_spec.channels)))
                }, userData),
            until: deadline, what: "the sink list")
        try connection.complete(
            pulse.pa_context_get_source_info_list(
                connection.context,
                { _, source, _, userData in
                    guard let source = source?.pointee, let name = source.name.map({ String(cString: $0) }) else { return }
                    Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue().value.sources.append(
                        Source(
                            name: name, description: source.description.map { String(cString: $0) } ?? name,
                            isMonitor: source.monitor_of_sink != UInt32.max))
                }, userData),
            until: deadline, what: "the source list")
        if withInputs {
            try connection.complete(
                pulse.pa_context_get_sink_input_info_list(
                    connection.context,
                    { _, input, _, userData in
                        guard let input = input?.pointee else { return }
                        Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue().value.inputs.append(
                            (PulsePlaybackStreams.stream(from: input), input.sink))
                    }, userData),
                until: deadline, what: "the sink input list")
        }
        return box.value
    }

    /// The mean of `volume`'s channels, in percent of PA_VOLUME_NORM (0x10000), rounded.
    static func percent(of volume: pa_cvolume) -> Int {
        let channels = Int(volume.channels)
        guard channels > 0 else { return 0 }
        let total = withUnsafeBytes(of: volume.values) { raw in
            raw.bindMemory(to: UInt32.self).prefix(channels).reduce(0) { $0 + Int($1) }
        }
        let norm = 0x10000
        return (total * 100 / channels + norm / 2) / norm
    }

    /// What the introspection callbacks fill (main loop thread, lock held by the waiter).
    private final class Box {
        var value = PulseServerSnapshot()
    }
}
