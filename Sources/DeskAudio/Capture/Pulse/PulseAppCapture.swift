import CPulse
import Glibc
import Synchronization

/// Records chosen applications through the PulseAudio API without moving them: one record
/// stream per selected sink input, on the monitor of the sink it plays to and limited to that
/// input, each on a client connection of its own (`PulseStreamTap`), all served by this
/// capture's main loop and mixed on its thread by a `SourceMixer`. A clock tap on the
/// default sink's monitor, heard as silence, keeps time while no chosen application plays,
/// so the zero gate counts as with a whole-sink capture. Paused (corked) inputs are left out
/// of the mix, so they never hold the others back. The speakers keep playing everything.
final class PulseAppCapture: CaptureStream {
    /// The most application streams mixed at once (the mixer's inputs, less the clock).
    static let maxStreams = MixerInputs.capacity - 1
    private let selection: AppSelection
    private let feed: SourceFeed
    private let wake: WakeSignal
    private let ownProcess = getpid()
    private var connection: PulseConnection?
    private let failed = Atomic<Bool>(false)
    // Main loop thread, or its lock held, from here on.
    private var clock: PulseStreamTap?
    private var taps: [UInt32: PulseStreamTap] = [:]
    /// Every sink input seen, as it was first announced: for the events when it goes.
    private var known: [UInt32: PlaybackStream] = [:]
    /// The monitor source of each sink, by sink index.
    private var monitors: [UInt32: String] = [:]
    // 250 ms: the server hands each record stream its audio on its own schedule, and a
    // loaded machine (a sanitizer build) delays one by tens of ms. Filling a late stream
    // with silence is a click; waiting for it costs latency only while one lags: in step,
    // all are mixed at once. A stream that has delivered nothing yet is not waited for (it
    // joins the mix with its first audio).
    private let mixer = SourceMixer(maxWaitSamples: 12_000)
    private let inputs = MixerInputs()
    private var inputsChanged = true
    // The mixer's counts already passed to the feed (R-APP-LEVEL: they reach the stats).
    private var countedFills: (filled: UInt64, dropped: UInt64) = (0, 0)
    private let mixed: UnsafeMutableBufferPointer<Float>
    private let silence: UnsafeMutableBufferPointer<Float>
    private var warnedFull = false
    private let layout: ChannelLayout

    /// True once the server connection or the clock stream failed after start.
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// A capture of what `selection` takes, written to `feed` in `layout`'s channels.
    init(selection: AppSelection, feed: SourceFeed, wake: WakeSignal, layout: ChannelLayout = .stereo) {
        self.layout = layout
        mixer.channels = layout.channels
        self.selection = selection
        self.feed = feed
        self.wake = wake
        mixed = .allocate(capacity: 4096)
        silence = .zeroed(4096)
    }

    deinit {
        stop()
        mixed.deallocate()
        silence.deallocate()
    }

    /// Connects, starts the clock on the default sink's monitor and a tap for each selected
    /// stream playing now, and follows streams and the default sink from then on.
    func start(timeoutMs: Int = 3000) throws(DeskAudioError) {
        let deadline = LibraryClock.system.deadline(afterMilliseconds: timeoutMs)
        let connection = try PulseConnection(deadline: deadline)
        self.connection = connection
        try connection.withLock(undoingOnError: stop) { () throws(DeskAudioError) in
            try connection.complete(
                pulse.pa_context_get_sink_info_list(connection.context, PulseAppCapture.noteSink, me),
                until: deadline, what: "the sink list")
            let monitor = try defaultMonitor(on: connection, deadline: deadline)
            startClock(on: monitor)
            try connection.wait(until: deadline, what: "the clock stream") { (clock?.isReady ?? true) || hasFailed }
            guard clock?.isReady == true else {
                throw .streamFailed("PulseAudio could not record from \(monitor): \(connection.failureText)")
            }
            watch(connection)
            try connection.complete(
                pulse.pa_context_subscribe(
                    connection.context,
                    pa_subscription_mask_t(
                        PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue | PA_SUBSCRIPTION_MASK_SINK.rawValue
                            | PA_SUBSCRIPTION_MASK_SERVER.rawValue), nil, nil),
                until: deadline, what: "stream notifications")
            try connection.complete(
                pulse.pa_context_get_sink_input_info_list(connection.context, PulseAppCapture.consider, me),
                until: deadline, what: "the sink input list")
        }
    }

    func stop() {
        guard let connection else { return }
        connection.lock()
        pulse.pa_context_set_subscribe_callback(connection.context, nil, nil)
        pulse.pa_context_set_state_callback(connection.context, nil, nil)
        clock?.stop()
        clock = nil
        for tap in taps.values { tap.stop() }
        taps = [:]
        feed.appLevels.removeAll()
        connection.unlock()
        connection.close()
        self.connection = nil
    }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Lock held: the monitor source of the server's default sink.
    private func defaultMonitor(on connection: PulseConnection, deadline: UInt64) throws(DeskAudioError) -> String {
        let server = try PulseServerSnapshot.read(on: connection, deadline: deadline, withInputs: false)
        guard let sinkName = server.defaultSink else { throw .streamFailed("the server has no default sink") }
        guard let monitor = server.sinks.first(where: { $0.name == sinkName })?.monitorSource else {
            throw .noDevice("the default sink \(sinkName) is gone")
        }
        return monitor
    }

    /// Context failure marks the capture failed; server changes are followed.
    private func watch(_ connection: PulseConnection) {
        pulse.pa_context_set_state_callback(
            connection.context,
            { context, userData in
                let state = pulse.pa_context_get_state(context)
                guard state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED else { return }
                Unmanaged<PulseAppCapture>.fromOpaque(userData!).takeUnretainedValue().failed.store(true, ordering: .releasing)
            }, me)
        pulse.pa_context_set_subscribe_callback(
            connection.context,
            { context, event, index, userData in
                let capture = Unmanaged<PulseAppCapture>.fromOpaque(userData!).takeUnretainedValue()
                let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
                let removed =
                    event.rawValue & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue == PA_SUBSCRIPTION_EVENT_REMOVE.rawValue
                switch facility {
                case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue where removed:
                    capture.forget(index)
                case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue:
                    pulse.pa_operation_unref(
                        pulse.pa_context_get_sink_input_info(context, index, PulseAppCapture.consider, userData))
                case PA_SUBSCRIPTION_EVENT_SINK.rawValue where removed:
                    capture.monitors[index] = nil
                case PA_SUBSCRIPTION_EVENT_SINK.rawValue:
                    pulse.pa_operation_unref(
                        pulse.pa_context_get_sink_info_by_index(context, index, PulseAppCapture.noteSink, userData))
                case PA_SUBSCRIPTION_EVENT_SERVER.rawValue:
                    capture.followDefaultSink()
                default:
                    break
                }
            }, me)
    }

    // Main loop thread: a sink listed or announced; inputs waiting for its monitor are looked at again.
    private static let noteSink: pa_sink_info_cb_t = { context, sink, _, userData in
        guard let sink = sink?.pointee, let monitor = sink.monitor_source_name else { return }
        let capture = Unmanaged<PulseAppCapture>.fromOpaque(userData!).takeUnretainedValue()
        let isNew = capture.monitors[sink.index] == nil
        capture.monitors[sink.index] = String(cString: monitor)
        if isNew && capture.clock != nil {
            pulse.pa_operation_unref(
                pulse.pa_context_get_sink_input_info_list(context, PulseAppCapture.consider, userData))
        }
    }

    // Main loop thread: one sink input, listed or announced (new, changed, moved, corked).
    private static let consider: pa_sink_input_info_cb_t = { _, input, _, userData in
        guard let input = input?.pointee else { return }
        Unmanaged<PulseAppCapture>.fromOpaque(userData!).takeUnretainedValue().consider(input)
    }

    private func consider(_ input: pa_sink_input_info) {
        let stream = PulsePlaybackStreams.stream(from: input)
        let recorded = selection.records(stream, ownProcess: ownProcess)
        if known[input.index] == nil {
            known[input.index] = stream
            feed.reportPlayback(stream, appeared: true, recorded: recorded)
        }
        let monitor = monitors[input.sink]
        let wanted = recorded && input.corked == 0 && monitor != nil
        if let tap = taps[input.index], !wanted || tap.device != monitor {
            removeTap(of: input.index, tap)
        }
        guard wanted, let monitor, taps[input.index] == nil else { return }
        guard let slot = (1...PulseAppCapture.maxStreams).first(where: { slot in !taps.values.contains { $0.slot == slot } })
        else {
            if !warnedFull {
                warnedFull = true
                feed.notices.log(
                    .warning, "\(feed.name): more than \(PulseAppCapture.maxStreams) streams at once: the rest not recorded")
            }
            return
        }
        let tap = PulseStreamTap(
            .sinkInput(input.index), device: monitor, slot: slot, silence: UnsafeBufferPointer(silence), layout: layout,
            onRead: { [unowned self] _, _ in mixAvailable() },
            onEnd: { [unowned self] tap in tapEnded(tap) })
        if selection.measuresLevels { tap.meter = feed.appLevels.meter(for: stream) }
        taps[input.index] = tap
        inputsChanged = true
        if let connection, !tap.start(on: connection) { removeTap(of: input.index, tap) }
    }

    private func removeTap(of index: UInt32, _ tap: PulseStreamTap) {
        tap.stop()
        taps[index] = nil
        feed.appLevels.remove(index)
        inputsChanged = true
    }

    // Main loop thread: a sink input is gone.
    private func forget(_ index: UInt32) {
        if let tap = taps[index] { removeTap(of: index, tap) }
        guard let stream = known.removeValue(forKey: index) else { return }
        feed.reportPlayback(stream, appeared: false, recorded: selection.records(stream, ownProcess: ownProcess))
    }

    // Main loop thread: the server ended a tap (its input moved to another sink, say): the
    // clock's end fails the capture; an input's is looked at again.
    private func tapEnded(_ tap: PulseStreamTap) {
        guard case .sinkInput(let index) = tap.kind else {
            return failed.store(true, ordering: .releasing)
        }
        guard taps[index] === tap else { return }
        removeTap(of: index, tap)
        pulse.pa_operation_unref(
            pulse.pa_context_get_sink_input_info(connection?.context, index, PulseAppCapture.consider, me))
    }

    private func startClock(on monitor: String) {
        let tap = PulseStreamTap(
            .clock, device: monitor, slot: 0, silence: UnsafeBufferPointer(silence), layout: layout,
            onRead: { [unowned self] _, stream in
                if let latency = PulseConnection.latencyNs(of: stream) { feed.reportServerLatency(nanoseconds: latency) }
                mixAvailable()
            },
            onEnd: { [unowned self] _ in failed.store(true, ordering: .releasing) })
        clock = tap
        inputsChanged = true
        if let connection, !tap.start(on: connection) { failed.store(true, ordering: .releasing) }
    }

    // Main loop thread: the default sink may have changed; the clock moves to its monitor.
    private func followDefaultSink() {
        pulse.pa_operation_unref(
            pulse.pa_context_get_server_info(
                connection?.context,
                { context, info, userData in
                    guard let sink = info?.pointee.default_sink_name else { return }
                    pulse.pa_operation_unref(
                        pulse.pa_context_get_sink_info_by_name(
                            context, sink,
                            { _, sink, _, userData in
                                guard let monitor = sink?.pointee.monitor_source_name else { return }
                                let capture = Unmanaged<PulseAppCapture>.fromOpaque(userData!).takeUnretainedValue()
                                capture.moveClock(to: String(cString: monitor))
                            }, userData))
                }, me))
    }

    private func moveClock(to monitor: String) {
        guard let clock, clock.device != monitor else { return }
        clock.stop()
        self.clock = nil
        feed.reportDeviceChange(to: monitor)
        startClock(on: monitor)
    }

    // Main loop thread: mixes what every tap holds into the feed and wakes the worker.
    private func mixAvailable() {
        if taps.values.contains(where: { !$0.hasDelivered && $0.ring.availableFloats > 0 }) {
            for tap in taps.values where tap.ring.availableFloats > 0 { tap.hasDelivered = true }
            inputsChanged = true
        }
        if inputsChanged {
            inputsChanged = false
            inputs.removeAll()
            if let clock { inputs.append(clock.ring, flags: [], slot: clock.slot) }
            for tap in taps.values where tap.hasDelivered { inputs.append(tap.ring, flags: [], slot: tap.slot) }
            mixer.forgetLateAudio()
        }
        while true {
            let (count, _) = mixer.pull(inputs, into: UnsafeMutableBufferPointer(rebasing: mixed[0..<(mixed.count - mixed.count % layout.channels)]))
            guard count > 0 else { break }
            feed.write(UnsafeBufferPointer(rebasing: mixed[0..<count]))
        }
        let counts = (filled: mixer.silenceFilledSamples, dropped: mixer.lateDroppedSamples)
        if counts != countedFills {
            feed.countOwnMix(filled: counts.filled - countedFills.filled, dropped: counts.dropped - countedFills.dropped)
            countedFills = counts
        }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }
}
