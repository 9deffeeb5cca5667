import CPulse
import Glibc
import Synchronization

/// Keeps what a capture records off the machine's speakers through the PulseAudio API (a
/// PulseAudio daemon or pipewire-pulse), the default sink untouched: it loads a null sink of
/// its own (`module-null-sink`, `deskaudio_mute_<pid>_<n>`) and moves there each sink input
/// the selection takes, new ones as they appear; the capture records that sink's monitor.
/// Finishing moves each back to the sink it played to and unloads the module.
///
/// A loaded module outlives the client that loaded it: when the process dies, its streams
/// stay on the silent sink. `PulseNullSink.unloadLeftovers`, run by every capture start on
/// this backend, unloads the null sinks of processes that are gone, and the server moves their streams to
/// the default sink. A stream moved elsewhere while muted (by the user) is left there.
/// `start` and `finish` on the owner's thread; the rest on this mute's main loop thread.
final class PulseHostMute {
    /// The start of every mute sink's name.
    static let sinkNamePrefix = PulseNullSink.prefixes[0]
    private static let sinksMade = Atomic<Int>(0)

    /// The name of this mute's sink; the capture records its monitor.
    let sinkName: String
    private let selection: AppSelection
    private let ownProcess = getpid()
    private var connection: PulseConnection?
    // Main loop thread, or its lock held.
    private var module = UInt32.max
    private var sinkIndex = UInt32.max
    /// Sink inputs moved to the mute sink, with the sink each played to.
    private var moved: [UInt32: UInt32] = [:]

    /// A mute of what `selection` takes; nothing happens before `start`.
    init(selection: AppSelection) {
        self.selection = selection
        let number = PulseHostMute.sinksMade.add(1, ordering: .relaxed).newValue
        sinkName = "\(PulseHostMute.sinkNamePrefix)\(getpid())_\(number)"
    }

    /// Connects, loads the null sink, moves what the selection takes now and follows new
    /// streams; blocks up to `timeoutMs`. After a throw, `finish` cleans up.
    func start(timeoutMs: Int = 3000) throws(DeskAudioError) {
        let deadline = LibraryClock.system.deadline(afterMilliseconds: timeoutMs)
        let connection = try PulseConnection(deadline: deadline)
        self.connection = connection
        connection.lock()
        defer { connection.unlock() }
        let me = Unmanaged.passUnretained(self).toOpaque()
        module = try PulseNullSink.load(
            sinkName, description: "DeskAudio-host-muted", on: connection, deadline: deadline)
        try connection.complete(
            pulse.pa_context_get_sink_info_by_name(
                connection.context, sinkName,
                { _, sink, _, userData in
                    guard let sink else { return }
                    Unmanaged<PulseHostMute>.fromOpaque(userData!).takeUnretainedValue().sinkIndex = sink.pointee.index
                }, me),
            until: deadline, what: "the sink that mutes the host")
        pulse.pa_context_set_subscribe_callback(
            connection.context,
            { context, event, index, userData in
                let mute = Unmanaged<PulseHostMute>.fromOpaque(userData!).takeUnretainedValue()
                let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
                guard facility == PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue else { return }
                if event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue {
                    mute.moved[index] = nil
                } else {
                    pulse.pa_operation_unref(
                        pulse.pa_context_get_sink_input_info(context, index, PulseHostMute.consider, userData))
                }
            }, me)
        try connection.complete(
            pulse.pa_context_subscribe(connection.context, PA_SUBSCRIPTION_MASK_SINK_INPUT, nil, nil),
            until: deadline, what: "stream notifications")
        try connection.complete(
            pulse.pa_context_get_sink_input_info_list(connection.context, PulseHostMute.consider, me),
            until: deadline, what: "the sink input list")
    }

    /// Every moved stream goes back to the sink it played to (waiting up to 1 s), the module
    /// is unloaded, the connection closed; safe to call twice.
    func finish() {
        guard let connection else { return }
        connection.lock()
        pulse.pa_context_set_subscribe_callback(connection.context, nil, nil)
        let deadline = LibraryClock.system.deadline(afterMilliseconds: 1000)
        for (input, sink) in moved {
            try? connection.complete(
                pulse.pa_context_move_sink_input_by_index(connection.context, input, sink, nil, nil),
                until: deadline, what: "moving a stream back")
        }
        moved = [:]
        if module != UInt32.max {
            PulseNullSink.unload(module, on: connection, deadline: deadline)
            module = UInt32.max
        }
        connection.unlock()
        connection.close()
        self.connection = nil
    }

    // Main loop thread: one sink input, listed or announced.
    private static let consider: pa_sink_input_info_cb_t = { context, input, _, userData in
        guard let input = input?.pointee else { return }
        let mute = Unmanaged<PulseHostMute>.fromOpaque(userData!).takeUnretainedValue()
        if let original = mute.moved[input.index] {
            // Moved by someone else to a third sink while muted: their choice stands.
            if input.sink != mute.sinkIndex && input.sink != original { mute.moved[input.index] = nil }
            return
        }
        guard input.sink != mute.sinkIndex,
            mute.selection.records(PulsePlaybackStreams.stream(from: input), ownProcess: mute.ownProcess)
        else { return }
        mute.moved[input.index] = input.sink
        pulse.pa_operation_unref(
            pulse.pa_context_move_sink_input_by_index(context, input.index, mute.sinkIndex, nil, nil))
    }
}
