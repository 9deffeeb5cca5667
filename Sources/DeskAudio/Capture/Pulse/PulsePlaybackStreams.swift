import CPulse
import Glibc

/// The streams applications play on a PulseAudio server (or pipewire-pulse), read once: its
/// sink inputs, with the application's name, binary and process id from their property lists.
enum PulsePlaybackStreams {
    /// Lock held: lists them within `deadline` (CLOCK_MONOTONIC ns).
    static func read(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> [PlaybackStream] {
        let found = Found()
        try connection.complete(
            pulse.pa_context_get_sink_input_info_list(
                connection.context,
                { _, input, _, userData in
                    guard let input = input?.pointee else { return }
                    Unmanaged<Found>.fromOpaque(userData!).takeUnretainedValue().streams.append(
                        PulsePlaybackStreams.stream(from: input))
                }, Unmanaged.passUnretained(found).toOpaque()),
            until: deadline, what: "the sink input list")
        return found.streams
    }

    /// A sink input as a playback stream: its index, and the application's name, binary and
    /// process id from its property list.
    static func stream(from input: pa_sink_input_info) -> PlaybackStream {
        func property(_ key: String) -> String {
            pulse.pa_proplist_gets(input.proplist, key).map { String(cString: $0) } ?? ""
        }
        return PlaybackStream(
            id: input.index, applicationName: property("application.name"),
            binary: property("application.process.binary"),
            processID: Int32(property("application.process.id")) ?? 0,
            nodeName: property("node.name"), isRunning: input.corked == 0)
    }

    /// What the introspection callback collects (main loop thread, lock held by the waiter).
    private final class Found {
        var streams: [PlaybackStream] = []
    }
}
