import CPulse
import Glibc
import Synchronization

/// Captures through libpulse's asynchronous API on its own `pa_threaded_mainloop`:
/// F32LE 48 kHz stereo requested (the server converts from whatever its device runs at),
/// with fragsize set to 10 ms so the server hands audio over every 10 ms instead of its
/// default of seconds. The read callback only copies into the ring and wakes the worker.
final class PulseCapture: CaptureStream {
    private let feed: SourceFeed
    private let wake: WakeSignal
    private var connection: PulseConnection?
    private var stream: OpaquePointer?
    /// The server's answer to "which device is the target now?".
    private enum Resolution {
        case device(String)
        case failure(DeskAudioError)
    }
    // Written by callbacks on the main loop thread, read with the main loop lock held.
    private var resolution: Resolution?
    // The device the target meant when last resolved while recording: a change of it (not
    // a server's own move that we undo) is what the host hears of as a device change.
    private var followedDevice: String?
    // What this stream records.
    private var target = CaptureTarget.defaultSinkMonitor
    private let failed = Atomic<Bool>(false)
    // Run once when the stream stops: a mute finished, a virtual sink unloaded.
    private var onStop: (() -> Void)?
    // Samples per channel per fragment the server is asked for.
    private var periodSamples: Int
    // On pipewire-pulse: the graph quantum the host asked for, which the fragments then are.
    private let pipeWireQuantum: Int?
    // The channels asked of the server.
    private let layout: ChannelLayout
    // On plain PulseAudio: when the stream's samples sounded, from the server's snapshots.
    // Nil on pipewire-pulse, whose capture times are worked back from arrivals.
    private var serverTiming: PulseRecordTiming?
    // Places the reads on the timeline and writes them into the feed: on the main loop only.
    private var readTiming: LoopBound<PulseReadTiming>?
    // The same trace as readTiming's, reachable from the thread that stops the stream.
    private var trace: TimingTrace?

    /// True once the server connection or the record stream failed after start.
    var hasFailed: Bool { failed.load(ordering: .acquiring) }

    /// A stream writing to `feed`, handed fragments of `periodSamples` samples per channel,
    /// or, on pipewire-pulse, of `pipeWireQuantum` when set (the graph then runs at that
    /// quantum; plain PulseAudio keeps `periodSamples`: its capture times suffer from small
    /// fragments, docs/performance.md); `onStop` runs once when it stops (a started mute's
    /// finish, a virtual sink's unload); it records in `layout`'s channels.
    init(
        feed: SourceFeed, wake: WakeSignal, periodSamples: Int = FrameDuration.ms10.samples,
        pipeWireQuantum: Int? = nil, layout: ChannelLayout = .stereo, onStop: (() -> Void)? = nil
    ) {
        self.layout = layout
        self.feed = feed
        self.wake = wake
        self.periodSamples = periodSamples
        self.pipeWireQuantum = pipeWireQuantum
        self.onStop = onStop
    }

    deinit { stop() }

    /// Connects, resolves the device for `target` through the server, and starts recording.
    func start(_ target: CaptureTarget, timeoutMs: Int = 3000) throws(DeskAudioError) {
        precondition(connection == nil, "start called twice")
        let deadline = LibraryClock.system.deadline(afterMilliseconds: timeoutMs)
        // pipewire-pulse does not make a client's quantum smaller than its pulse.min.quantum
        // and pulse.min.frag, unless the client's own properties say so.
        let quantum = pipeWireQuantum.map { "\($0)/\(AudioFormat.sampleRate)" }
        let newConnection = try PulseConnection(
            deadline: deadline, properties: quantum.map { ["pulse.min.quantum": $0, "pulse.min.frag": $0] } ?? [:])
        connection = newConnection
        try newConnection.withLock(undoingOnError: stop) { () throws(DeskAudioError) in
            self.target = target
            let onPipeWire = try newConnection.serverName(until: deadline).hasPrefix("PulseAudio (on PipeWire")
            if onPipeWire {
                periodSamples = pipeWireQuantum ?? periodSamples
            } else {
                // The first reads wait for the first answer (`readAvailable`), then go at once.
                serverTiming = PulseRecordTiming(channels: layout.channels) { [unowned self] stream in
                    self.readAvailable(stream)
                }
            }
            let trace = TimingTrace.start(
                kind: onPipeWire ? "pipewire-pulse" : "pulseaudio", feed: feed, readSamples: periodSamples,
                readsMonitor: target.recordsASink)
            self.trace = trace
            readTiming = LoopBound(PulseReadTiming(channels: layout.channels, trace: trace), on: "libpulse's main loop") {
                [loop = newConnection.loopAddress] in PulseConnection.isOnLoop(at: loop)
            }
            resolveTarget()
            try newConnection.wait(until: deadline, what: "the capture device") { resolution != nil }
            guard case .device(let device) = resolution else {
                if case .failure(let error) = resolution { throw error }
                throw DeskAudioError.streamFailed("PulseAudio gave no capture device")
            }
            try recordLocked(from: device, on: newConnection, deadline: deadline)
            followedDevice = device
            if target.deviceName == nil {
                try followDefaultsLocked(on: newConnection)
                // A default that changed between the first answer and the subscription sent
                // no event we could hear: ask once more, now that changes are heard.
                resolveTarget()
            }
            watchForFailureLocked(on: newConnection)
        }
    }

    func stop() {
        defer {
            onStop?()
            onStop = nil
        }
        guard let connection else { return }
        if let stream {
            connection.lock()
            pulse.pa_stream_set_state_callback(stream, nil, nil)
            pulse.pa_stream_set_read_callback(stream, nil, nil)
            pulse.pa_stream_set_moved_callback(stream, nil, nil)
            _ = pulse.pa_stream_disconnect(stream)
            pulse.pa_stream_unref(stream)
            self.stream = nil
            connection.unlock()
        }
        // No read runs now: the trace, if any, is written here.
        trace?.finish(feed: feed)
        trace = nil
        connection.close()
        self.connection = nil
    }

    private func recordLocked(
        from device: String, on connection: PulseConnection, deadline: UInt64
    ) throws(DeskAudioError) {
        guard let newStream = connection.newRecordStream(named: "DeskAudio capture", layout: layout) else {
            throw .streamFailed("PulseAudio refused the stream: \(connection.failureText)")
        }
        stream = newStream
        pulse.pa_stream_set_read_callback(
            newStream,
            { stream, _, userData in
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().readAvailable(stream)
            }, Unmanaged.passUnretained(self).toOpaque())
        var attributes = PulseConnection.fragments(ofSamples: periodSamples, channels: layout.channels)
        // Timing updates let the read callback ask the server's latency without a round trip.
        // A device the host named is kept: when it goes, the stream fails (and is reopened
        // once the device is back) instead of being moved to another one.
        let keep = target.deviceName != nil ? PA_STREAM_DONT_MOVE.rawValue : 0
        let flags = pa_stream_flags_t(
            PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_INTERPOLATE_TIMING.rawValue | keep)
        guard pulse.pa_stream_connect_record(newStream, device, &attributes, flags) >= 0 else {
            throw .streamFailed("PulseAudio refused to record from \(device): \(connection.failureText)")
        }
        var state = PA_STREAM_UNCONNECTED
        try connection.wait(until: deadline, what: "record stream") {
            state = pulse.pa_stream_get_state(newStream)
            return state == PA_STREAM_READY || state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED
        }
        guard state == PA_STREAM_READY else {
            throw .streamFailed("PulseAudio could not record from \(device): \(connection.failureText)")
        }
    }

    /// Subscribes to server changes: when the default sink (or source) changes, the stream
    /// is moved to the new default's monitor (or the new default source).
    private func followDefaultsLocked(on connection: PulseConnection) throws(DeskAudioError) {
        pulse.pa_context_set_subscribe_callback(
            connection.context,
            { _, event, _, userData in
                let facility = event.rawValue & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue
                guard facility == PA_SUBSCRIPTION_EVENT_SERVER.rawValue else { return }
                let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                capture.feed.notices.log(.debug, "\(capture.feed.name): the server's settings changed: asking for its defaults")
                capture.resolveTarget()
            }, Unmanaged.passUnretained(self).toOpaque())
        guard let operation = pulse.pa_context_subscribe(connection.context, PA_SUBSCRIPTION_MASK_SERVER, nil, nil)
        else {
            throw .streamFailed("PulseAudio refused change notifications: \(connection.failureText)")
        }
        pulse.pa_operation_unref(operation)
    }

    /// From now on, a context or stream that fails or terminates marks the capture failed,
    /// and a stream the server moves (its device went away, say) is checked against the
    /// target again and moved back where it belongs.
    private func watchForFailureLocked(on connection: PulseConnection) {
        let me = Unmanaged.passUnretained(self).toOpaque()
        pulse.pa_stream_set_moved_callback(
            stream,
            { stream, userData in
                let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                capture.feed.notices.log(
                    .debug,
                    "\(capture.feed.name): the server moved the stream to "
                        + (pulse.pa_stream_get_device_name(stream).map { String(cString: $0) } ?? "?"))
                capture.resolveTarget()
            }, me)
        pulse.pa_context_set_state_callback(
            connection.context,
            { context, userData in
                let state = pulse.pa_context_get_state(context)
                guard state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED else { return }
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().failed.store(
                    true, ordering: .releasing)
            }, me)
        pulse.pa_stream_set_state_callback(
            stream,
            { stream, userData in
                let state = pulse.pa_stream_get_state(stream)
                guard state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED else { return }
                Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue().failed.store(
                    true, ordering: .releasing)
            }, me)
    }

    /// Asks the server which device the target means now: the (default or named) sink's
    /// monitor, or the (default or named) source, never a monitor. The answer lands in
    /// `resolution`; a running stream moves there if it is another device. Lock held, or on
    /// the main loop thread.
    private func resolveTarget() {
        guard let context = connection?.context else { return }
        resolution = nil
        let me = Unmanaged.passUnretained(self).toOpaque()
        switch target {
        case .sinkMonitor(let name):
            return lookUpSink(name, on: context)
        case .source(let name):
            return lookUpSource(name, on: context)
        case .applications:  // PulseBackend records these with a PulseAppCapture
            return resolved(.failure(.notSupported("a PulseCapture records no selection of applications")))
        case .defaultSinkMonitor, .defaultSource:
            break
        }
        pulse.pa_operation_unref(
            pulse.pa_context_get_server_info(
                context,
                { context, info, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    let name = { (text: UnsafePointer<CChar>?) in text.map { String(cString: $0) } ?? "none" }
                    capture.feed.notices.log(
                        .debug,
                        "\(capture.feed.name): the server's default sink is \(name(info?.pointee.default_sink_name)), "
                            + "its default source \(name(info?.pointee.default_source_name))")
                    if capture.target.recordsASink {
                        guard let sink = info?.pointee.default_sink_name else {
                            return capture.resolved(.failure(.streamFailed("the server has no default sink")))
                        }
                        capture.lookUpSink(String(cString: sink), on: context)
                    } else {
                        guard let source = info?.pointee.default_source_name else {
                            return capture.resolved(.failure(.streamFailed("the server has no default source")))
                        }
                        capture.lookUpSource(String(cString: source), on: context)
                    }
                }, me))
    }

    /// Resolves to the monitor of the sink `name`.
    private func lookUpSink(_ name: String, on context: OpaquePointer?) {
        requestedName = name
        pulse.pa_operation_unref(
            pulse.pa_context_get_sink_info_by_name(
                context, name,
                { _, sink, endOfList, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    if let monitor = sink?.pointee.monitor_source_name {
                        capture.resolved(.device(String(cString: monitor)))
                    } else if endOfList < 0 {
                        capture.resolved(.failure(.noDevice(capture.missingDevice("sink"))))
                    }
                }, Unmanaged.passUnretained(self).toOpaque()))
    }

    /// Resolves to the source `name`, refused when it is a monitor.
    private func lookUpSource(_ name: String, on context: OpaquePointer?) {
        requestedName = name
        pulse.pa_operation_unref(
            pulse.pa_context_get_source_info_by_name(
                context, name,
                { _, source, endOfList, userData in
                    let capture = Unmanaged<PulseCapture>.fromOpaque(userData!).takeUnretainedValue()
                    if let source, source.pointee.monitor_of_sink != UInt32.max {
                        capture.resolved(.failure(capture.monitorRefused(String(cString: source.pointee.name))))
                    } else if let source {
                        capture.resolved(.device(String(cString: source.pointee.name)))
                    } else if endOfList < 0 {
                        capture.resolved(.failure(.noDevice(capture.missingDevice("source"))))
                    }
                }, Unmanaged.passUnretained(self).toOpaque()))
    }

    // The device name last looked up, for messages. Main loop thread or lock held.
    private var requestedName = ""

    private func missingDevice(_ kind: String) -> String {
        target.deviceName == nil
            ? "the default \(kind) \(requestedName) is gone" : "PulseAudio has no \(kind) named \(requestedName)"
    }

    private func monitorRefused(_ name: String) -> DeskAudioError {
        target.deviceName == nil
            ? .streamFailed("the default source \(name) is a sink monitor, not a microphone")
            : .noDevice("\(name) is a sink monitor: capture its sink as app audio, not as a microphone")
    }

    // Main loop thread (or lock held, during start, when there is no stream yet).
    // Compared with the device the stream is on now, as the server last said (a move we asked
    // for may lose to one the server makes itself, as when a device disappears).
    private func resolved(_ answer: Resolution) {
        resolution = answer
        guard case .device(let newDevice) = answer, let stream else { return }
        let current = pulse.pa_stream_get_device_name(stream).map { String(cString: $0) }
        if newDevice != followedDevice {
            followedDevice = newDevice
            feed.reportDeviceChange(to: newDevice)
        }
        guard newDevice != current else { return }
        pulse.pa_operation_unref(
            pulse.pa_context_move_source_output_by_name(
                connection?.context, pulse.pa_stream_get_index(stream), newDevice, nil, nil))
    }

    // Main loop thread: translate libpulse's account of the read for the timing, copy
    // everything readable through it into the ring, and wake the worker.
    private func readAvailable(_ stream: OpaquePointer?) {
        guard let readTiming else { return }
        let readable = pulse.pa_stream_readable_size(stream)
        let held = readTiming.withValue { timing -> Bool in
            if let serverTiming {
                // Plain PulseAudio: from the server's last snapshot, once per snapshot.
                serverTiming.refresh(stream: stream, nowNs: LibraryClock.system.nowNs())
                guard
                    timing.beginServerClockRead(
                        mark: serverTiming.takeMark(), hasMarked: serverTiming.hasMarked, readableBytes: readable,
                        nowNs: LibraryClock.system.nowNs())
                else { return true }
            } else {
                // pipewire-pulse reports no source latency for a monitor, and hands a monitor
                // each cycle as it is played; the server may keep part of a cycle back until a
                // whole fragment is ready.
                let update = pulse.pa_stream_get_timing_info(stream).map { info in
                    PulseTimingUpdate(
                        sourceUsec: info.pointee.source_usec, transportUsec: info.pointee.transport_usec,
                        stamp: info.pointee.timestamp)
                }
                timing.beginArrivalRead(
                    nowNs: LibraryClock.system.nowNs(), readableBytes: readable, timing: update,
                    readSamples: periodSamples)
            }
            PulseConnection.readFragments(of: stream) { samples, floats in timing.take(samples, floats: floats, into: feed) }
            return false
        }
        guard !held else { return }
        if let latency = PulseConnection.latencyNs(of: stream) { feed.reportServerLatency(nanoseconds: latency) }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }
}
