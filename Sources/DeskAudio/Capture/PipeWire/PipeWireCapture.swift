import CPipeWire
import DeskAudioShim
import Glibc
import Synchronization

/// Captures one PipeWire stream on its own `pw_thread_loop`, asking the server for
/// 48 kHz F32 in the options' channel layout (stereo by default) and period (the server
/// converts). The process callback runs
/// on PipeWire's real-time data thread and only copies into a `SampleRing` and wakes
/// the worker: no allocation, no lock.
final class PipeWireCapture: CaptureStream {
    private let feed: SourceFeed
    private let wake: WakeSignal
    private var connection: PipeWireConnection?
    private var linkWatch: PipeWireLinkWatch?
    private var appRouter: PipeWireAppRouter?
    private var deviceLinker: PipeWireDeviceLinker?
    // The sink made for a server that had none (StreamOptions.ensuresSink).
    private var virtualSink: OpaquePointer?
    private static let virtualSinksMade = Atomic<Int>(0)
    private var hostMute: PipeWireHostMute?
    private var stream: OpaquePointer?
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let failed = Atomic<Bool>(false)
    // Written on the loop thread with the loop lock held; read with it held.
    private var running = false
    private var periodSamples = FrameDuration.ms10.samples
    private var layout = ChannelLayout.stereo
    // Places the buffers on the timeline (app audio reads a sink's monitor). Made before the
    // stream starts; data thread only after that (or while no stream runs).
    private var timing = PipeWireCycleTiming(readsMonitor: false)
    // The graph's position (spa_io_position), as the stream was last told: its address bits.
    private let position = Atomic<UInt>(0)

    // When the session manager replaced the stream's own ports under the library's links
    // (CLOCK_MONOTONIC ns; 0: not since the last buffer), and buffers handed since.
    private let portsReplacedNs = Atomic<UInt64>(0)
    private let buffersHanded = Atomic<UInt64>(0)
    private let buffersAtReplacement = Atomic<UInt64>(0)
    /// How long a stream whose ports were replaced may go without a buffer before it counts as
    /// failed: WirePlumber 0.4.13 replaces them too, and there the frames went on with no step
    /// over 10 ms; a graph cycle lasts at most 21 ms (1024 samples).
    static let portsReplacedPatienceNs: UInt64 = 100_000_000

    /// True once the stream errored or was disconnected after it had started, or was fed
    /// nothing for `portsReplacedPatienceNs` after its ports were replaced under the
    /// library's links (R-WP-STREAM-PORTS: reopened then, not at the stall 2 s on).
    var hasFailed: Bool {
        if failed.load(ordering: .acquiring) { return true }
        let replaced = portsReplacedNs.load(ordering: .acquiring)
        guard replaced != 0 else { return false }
        if buffersHanded.load(ordering: .acquiring) > buffersAtReplacement.load(ordering: .acquiring) {
            portsReplacedNs.store(0, ordering: .releasing)  // fed on: nothing to do
            return false
        }
        guard LibraryClock.system.nowNs() &- replaced >= Self.portsReplacedPatienceNs else { return false }
        feed.notices.log(.info, "\(feed.name): fed nothing since the session manager replaced its ports: reopening")
        failed.store(true, ordering: .releasing)
        return true
    }

    init(feed: SourceFeed, wake: WakeSignal) {
        self.feed = feed
        self.wake = wake
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, _, newState, _ in
            let capture = Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue()
            capture.stateChanged(to: newState)
        }
        events.pointee.io_changed = { data, id, area, _ in
            guard id == SPA_IO_Position.rawValue else { return }
            let capture = Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue()
            capture.position.store(UInt(bitPattern: area), ordering: .releasing)
        }
        events.pointee.process = { data in
            Unmanaged<PipeWireCapture>.fromOpaque(data!).takeUnretainedValue().processBuffer()
        }
    }

    deinit {
        stop()
        events.deallocate()
    }

    /// Connects to the PipeWire daemon, checks `target` against its devices and starts the
    /// stream; returns once the server has accepted the stream, or throws with the reason.
    /// `options.linkingItself`: the library links the device (the default as it is now, or the
    /// one named) into the stream instead of the session manager (see PipeWireDeviceLinker);
    /// ignored for applications, which the library always links. `options.ensuresSink`: a
    /// server with no sink gets one of this connection's for the default sink's monitor.
    func start(_ target: CaptureTarget, options: StreamOptions = StreamOptions(), timeoutMs: Int = 3000)
        throws(DeskAudioError)
    {
        precondition(connection == nil && hostMute == nil, "start called twice")
        timing = PipeWireCycleTiming(
            readsMonitor: target.recordsASink,
            trace: TimingTrace.start(
                kind: "pipewire", feed: feed, readSamples: options.pipeWireQuantum ?? options.periodSamples,
                readsMonitor: target.recordsASink, linkingItself: options.linkingItself && target.isADevice))
        periodSamples = options.pipeWireQuantum ?? options.periodSamples
        layout = options.layout
        // The mute starts first, with no lock of this connection held: its start waits for
        // the session manager, which may be waiting on this connection's stream node.
        if case .applications(let selection) = target, selection.mutesHost {
            let mute = PipeWireHostMute(notices: feed.notices)
            hostMute = mute
            do throws(DeskAudioError) { try mute.start(timeoutMs: timeoutMs) } catch {
                stop()
                throw error
            }
        }
        let newConnection = try PipeWireConnection(name: "deskaudio-pipewire", realTime: true)
        connection = newConnection
        try newConnection.withLock(undoingOnError: stop) { () throws(DeskAudioError) in
            var deadline = newConnection.deadline(afterMilliseconds: timeoutMs)
            try PipeWireCapture.check(target, on: newConnection, deadline: &deadline)
            if options.ensuresSink, target == .defaultSinkMonitor {
                try ensureSinkLocked(on: newConnection, deadline: &deadline)
            }
            var linkedDevice: String?
            var sessionManagerAnswers = true
            if options.linkingItself, target.isADevice {
                let device = try PipeWireCapture.device(for: target, on: newConnection, deadline: &deadline)
                linkedDevice = device.name
                sessionManagerAnswers = device.isCurrent
                if !device.isCurrent {
                    feed.notices.log(
                        .warning, "\(feed.name): the session manager does not answer: linking \(device.name), the default it last named")
                }
            }
            try connectLocked(
                target, on: newConnection, deadline: &deadline, timeoutMs: timeoutMs, autoconnect: linkedDevice == nil,
                portsBySessionManager: sessionManagerAnswers)
            if case .applications(let selection) = target {
                try routeLocked(selection, on: newConnection)
            } else if let linkedDevice {
                try linkLocked(linkedDevice, target, on: newConnection)
            } else if target.deviceName == nil {
                try watchRelinksLocked(target, on: newConnection)
            }
        }
    }

    /// Disconnects and frees everything; safe to call more than once. After it returns,
    /// the process callback no longer runs.
    func stop() {
        defer {
            // After this connection's lock is let go, for the reason in start.
            hostMute?.finish()
            hostMute = nil
        }
        guard let connection else { return }
        connection.lock()
        linkWatch?.stopWatching()
        appRouter?.finish()
        appRouter = nil
        feed.appLevels.removeAll()
        deviceLinker?.finish()
        deviceLinker = nil
        if let virtualSink { pw_proxy_destroy(virtualSink) }
        virtualSink = nil
        if let stream { pw_stream_destroy(stream) }
        stream = nil
        timing.trace?.finish(feed: feed)
        timing.reset()
        connection.unlock()
        linkWatch = nil
        listenerStorage = nil
        connection.close()
        self.connection = nil
    }

    /// Refuses a target the daemon cannot serve as asked: an unknown device name, a source
    /// name that is a sink, or a default source that is a sink's monitor. The default sink's
    /// monitor needs no check, so no device list is read for it. Lock held.
    static func check(
        _ target: CaptureTarget, on connection: PipeWireConnection, deadline: inout timespec
    ) throws(DeskAudioError) {
        if case .applications = target { return }
        if target == .defaultSinkMonitor { return }
        let server = try PipeWireDevices.read(on: connection, deadline: &deadline)
        func device(_ name: String) -> CaptureDevice? { server.devices.first { $0.name == name } }
        switch target {
        case .defaultSinkMonitor, .applications:
            break
        case .defaultSource:
            if let name = server.defaultSourceName, device(name)?.kind == .sink {
                throw .streamFailed("the default source \(name) is a sink monitor, not a microphone")
            }
        case .sinkMonitor(let name):
            guard let found = device(name) else { throw .noDevice("PipeWire has no sink named \(name)") }
            guard found.kind == .sink else { throw .noDevice("\(name) is a source, not a sink") }
        case .source(let name):
            guard let found = device(name) else { throw .noDevice("PipeWire has no source named \(name)") }
            guard found.kind == .source else {
                throw .noDevice("\(name) is a sink: capture it as app audio, not as a microphone")
            }
        }
    }

    /// The name of the device `target` records now: the one named, or the default sink or
    /// source (`isCurrent` false: the one the session manager last named, while it does not
    /// answer). Lock held.
    static func device(
        for target: CaptureTarget, on connection: PipeWireConnection, deadline: inout timespec
    ) throws(DeskAudioError) -> (name: String, isCurrent: Bool) {
        if let name = target.deviceName { return (name, true) }
        let server = try PipeWireDevices.read(on: connection, deadline: &deadline)
        let kind = target.recordsASink ? "sink" : "source"
        guard let name = target.recordsASink ? server.defaultSinkName : server.defaultSourceName else {
            throw server.defaultsAreCurrent
                ? .noDevice("PipeWire names no default \(kind) (no session manager running?)")
                : .timeout("the session manager did not answer for the default \(kind) within \(PipeWireDevices.defaultsTimeoutMs) ms")
        }
        return (name, server.defaultsAreCurrent)
    }

    private func connectLocked(
        _ target: CaptureTarget, on connection: PipeWireConnection, deadline: inout timespec, timeoutMs: Int,
        autoconnect sessionManagerLinks: Bool, portsBySessionManager: Bool
    ) throws(DeskAudioError) {
        let properties = pw_properties_new_string(
            "media.type=Audio media.category=Capture media.role=Communication "
                + "node.latency=\(periodSamples)/\(AudioFormat.sampleRate) node.name=deskaudio application.name=DeskAudio")
        // Without capture.sink, an input stream is linked to a source; with it, to a sink's
        // monitor. Without target.object, the session manager picks the default and follows it.
        if target.recordsASink { pw_properties_set(properties, PW_KEY_STREAM_CAPTURE_SINK, "true") }
        // A device the host named is kept: when it goes, the session manager ends the stream
        // (reopened once the device is back) instead of moving it to the default.
        if let name = target.deviceName {
            pw_properties_set(properties, PW_KEY_TARGET_OBJECT, name)
            pw_properties_set(properties, PW_KEY_NODE_DONT_RECONNECT, "true")
        }
        // Applications are linked in by the router, not by the session manager, and so is a
        // device the library links itself; the stream runs unlinked too (silence), so the zero
        // gate sees time pass as with a monitor.
        var autoconnect = PW_STREAM_FLAG_AUTOCONNECT.rawValue
        if !sessionManagerLinks || !target.isADevice {
            pw_properties_set(properties, PW_KEY_NODE_AUTOCONNECT, "false")
            pw_properties_set(properties, PW_KEY_NODE_ALWAYS_PROCESS, "true")
            autoconnect = 0
        }
        // While the session manager does not answer, the stream's adapter sets up its own ports
        // (the session manager's job: one that does not answer leaves the node with none to
        // link). Not otherwise: a session manager that then configures them too replaces the
        // ports, and with them the library's links (seen after a PipeWire restart).
        if !portsBySessionManager {
            pw_properties_set(
                properties, "adapter.auto-port-config", "{ mode = dsp monitor = false control = false position = preserve }")
        }
        guard let newStream = pw_stream_new(connection.core, "DeskAudio capture", properties) else {
            throw .outOfResources("cannot create a PipeWire stream: \(PipeWireConnection.errnoText())")
        }
        stream = newStream
        let listener = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        listener.initialize(to: spa_hook())
        listenerStorage = listener
        pw_stream_add_listener(newStream, listener, events, Unmanaged.passUnretained(self).toOpaque())

        let result = PipeWireStereoInput.connect(
            newStream, flags: autoconnect | PW_STREAM_FLAG_MAP_BUFFERS.rawValue | PW_STREAM_FLAG_RT_PROCESS.rawValue,
            layout: layout)
        guard result >= 0 else {
            throw .streamFailed("PipeWire refused the capture stream: \(String(cString: strerror(-result)))")
        }
        try connection.waitUntilAccepted(newStream, "the capture stream", deadline: &deadline, timeoutMs: timeoutMs)
    }

    /// A stream that follows the default is relinked by the session manager without an event
    /// to the stream; the link watch turns that into a device-change notice. A microphone the
    /// session manager links to a sink's monitor (WirePlumber 0.5 coming back under load did,
    /// before the default source was there again) would carry what the machine plays: its
    /// audio is refused, so the stall watch reopens the stream to be linked anew (by the
    /// library itself if that happens twice). Lock held.
    private func watchRelinksLocked(_ target: CaptureTarget, on connection: PipeWireConnection) throws(DeskAudioError) {
        let suffix = target.recordsASink ? ".monitor" : ""
        let readsASource = !target.recordsASink
        let watch = PipeWireLinkWatch(
            connection: connection,
            streamNode: { [unowned self] in stream.map { pw_stream_get_node_id($0) } ?? UInt32.max },
            onLinked: { [unowned self] feeder in
                // The session manager linked the default it names (R-WP-RESTART).
                if let device = feeder.device, feeder.isSink != readsASource {
                    PipeWireDefaults.noteLinked(sinkName: readsASource ? nil : device, sourceName: readsASource ? device : nil)
                }
                // A source's stream fed by a sink is told of once, by onSinkFeeding.
                guard !feeder.isFirst, !(readsASource && feeder.isSink) else { return }
                feed.reportDeviceChange(to: feeder.name + suffix)
            },
            onSinkFeeding: { [unowned self] sink in
                guard readsASource else { return }
                if let sink {
                    feed.refuseAudio(
                        "linked to \(sink)'s monitor, which is not a microphone: its audio is left out, and the stream "
                            + "is reopened to be linked to a source")
                } else {
                    feed.acceptAudio()
                }
            })
        linkWatch = watch
        try watch.startWatching()
    }

    /// On a server with no sink at all, asks for a null sink owned by this connection
    /// (`deskaudio-virtual-<pid>-<n>`, priority.session 1: the default only while no other
    /// sink is there), waits until the session manager made it the default, and tells the
    /// host. Lock held.
    private func ensureSinkLocked(on connection: PipeWireConnection, deadline: inout timespec) throws(DeskAudioError) {
        let server = try PipeWireDevices.read(on: connection, deadline: &deadline)
        guard !server.devices.contains(where: { $0.kind == .sink }) else { return }
        let number = PipeWireCapture.virtualSinksMade.add(1, ordering: .relaxed).newValue
        let name = "deskaudio-virtual-\(getpid())-\(number)"
        guard let proxy = deskaudio_shim_create_null_sink(connection.core, name, "DeskAudio virtual sink", 1) else {
            throw .streamFailed("PipeWire refused a virtual sink: \(PipeWireConnection.errnoText())")
        }
        virtualSink = proxy
        // A stream connected before the session manager has a default for it is ended by
        // WirePlumber 0.4 ("no node available"): wait until the new sink is the default.
        while try PipeWireDevices.read(on: connection, deadline: &deadline).defaultSinkName != name {
            connection.unlock()
            usleep(20_000)
            connection.lock()
        }
        feed.notices.log(.info, "\(feed.name): the server has no sink: made \(name) for this capture")
        feed.reportDeviceChange(to: "\(name).monitor")
    }

    /// Links the device `name` into this stream itself. Lock held.
    private func linkLocked(_ name: String, _ target: CaptureTarget, on connection: PipeWireConnection)
        throws(DeskAudioError)
    {
        let linker = PipeWireDeviceLinker(
            connection: connection, deviceName: name, recordsMonitor: target.recordsASink,
            captureNode: { [unowned self] in stream.map { pw_stream_get_node_id($0) } ?? UInt32.max },
            onCapturePortsReplaced: { [unowned self] in
                // Watched by hasFailed (docs/reliability.md R-WP-STREAM-PORTS).
                guard portsReplacedNs.load(ordering: .acquiring) == 0 else { return }
                buffersAtReplacement.store(buffersHanded.load(ordering: .acquiring), ordering: .releasing)
                portsReplacedNs.store(LibraryClock.system.nowNs(), ordering: .releasing)
            })
        deviceLinker = linker
        try linker.startWatching()
        feed.notices.log(.info, "\(feed.name): linked to \(name) by the library (the session manager did not)")
    }

    /// Links what `selection` picks into this stream, following applications that come and
    /// go, and tells the host of each. Lock held.
    private func routeLocked(_ selection: AppSelection, on connection: PipeWireConnection) throws(DeskAudioError) {
        let router = PipeWireAppRouter(
            connection: connection, selection: selection, mute: hostMute,
            appLevels: selection.measuresLevels ? feed.appLevels : nil, captureNode: { [unowned self] in stream.map { pw_stream_get_node_id($0) } ?? UInt32.max },
            onChange: { [unowned self] stream, appeared, recorded in
                feed.reportPlayback(stream, appeared: appeared, recorded: recorded)
            })
        appRouter = router
        try router.startWatching()
    }

    private var listenerStorage: UnsafeMutablePointer<spa_hook>? {
        didSet { oldValue?.deallocate() }
    }

    // Loop thread, loop lock held.
    private func stateChanged(to newState: pw_stream_state) {
        if newState == PW_STREAM_STATE_PAUSED || newState == PW_STREAM_STATE_STREAMING { running = true }
        if running && (newState == PW_STREAM_STATE_ERROR || newState == PW_STREAM_STATE_UNCONNECTED) {
            failed.store(true, ordering: .releasing)
        }
        connection?.signal()
    }

    // PipeWire's data thread: translate the graph clock's account of the buffer, hand both
    // to the timing, wake the worker, give the buffer back.
    private func processBuffer() {
        guard let stream else { return }
        var time = pw_time()
        var report = PipeWireCycleReport.untimed
        if pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) == 0 {
            report = PipeWireCycleReport(
                nowNs: time.now, delayTicks: time.delay + Int64(time.buffered), ticks: time.ticks,
                rate: (time.rate.num, time.rate.denom),
                cycleDurationTicks: UnsafeRawPointer(bitPattern: position.load(ordering: .acquiring))?
                    .assumingMemoryBound(to: spa_io_position.self).pointee.clock.duration)
        }
        guard PipeWireStereoInput.read(stream, { samples in timing.take(samples, report: report, into: feed) }) else {
            return
        }
        buffersHanded.add(1, ordering: .releasing)
        wake.signal(ringHolding: feed.ring.availableFloats)
    }
}
