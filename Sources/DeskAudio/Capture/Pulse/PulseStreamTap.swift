import CPulse

/// One record stream of a `PulseAppCapture`, into a ring of its own: a sink's monitor limited
/// to one sink input (`pa_stream_set_monitor_stream`, what pavucontrol's per-stream meters
/// use), or the whole monitor heard as silence (the capture's clock). Everything here runs
/// on the connection's main loop thread, or with its lock held.
final class PulseStreamTap {
    /// What the stream records.
    enum Kind: Equatable {
        /// Only what the sink input with this index plays.
        case sinkInput(UInt32)
        /// The monitor's timing, its audio replaced by silence.
        case clock
    }

    /// What the stream records.
    let kind: Kind
    /// The monitor source it records from.
    let device: String
    /// The mixer slot of its ring (unique among the capture's taps).
    let slot: Int
    /// Audio read and not yet mixed: 0.5 s (the mix waits up to 250 ms for a lagging tap,
    /// while the others' audio queues here).
    let ring = SampleRing(minimumFloats: AudioFormat.sampleRate / 2 * ChannelLayout.surround71.channels)
    /// True once the capture has taken it into its mix (at its first audio).
    var hasDelivered = false
    /// Where what it records is measured, if anywhere.
    var meter: LevelMeter?
    private var stream: OpaquePointer?
    // An application's own client connection (nil for the clock, which uses the capture's).
    private var client: OpaquePointer?
    private let onRead: (PulseStreamTap, OpaquePointer) -> Void
    private let onEnd: (PulseStreamTap) -> Void
    private let silence: UnsafeBufferPointer<Float>
    private let layout: ChannelLayout

    /// A tap of `kind` on the monitor source `device`, not started. `onRead` runs after each
    /// read, `onEnd` once if the server ends the stream; `silence` holds zeros for the clock.
    /// It records in `layout`'s channels.
    init(
        _ kind: Kind, device: String, slot: Int, silence: UnsafeBufferPointer<Float>, layout: ChannelLayout,
        onRead: @escaping (PulseStreamTap, OpaquePointer) -> Void, onEnd: @escaping (PulseStreamTap) -> Void
    ) {
        self.layout = layout
        ring.setChannels(layout.channels, minimumFloats: AudioFormat.sampleRate / 2 * layout.channels)
        self.kind = kind
        self.device = device
        self.slot = slot
        self.silence = silence
        self.onRead = onRead
        self.onEnd = onEnd
    }

    /// Lock held: asks the server for the stream (10 ms fragments), the clock's on
    /// `connection`'s client, an application's on a client of its own: pipewire-pulse (0.3
    /// and 1.x) holds back the second and later per-application record streams of one
    /// client, 1.x for up to all an application plays (docs/capture.md). False when refused
    /// at once; a later refusal ends the tap (`onEnd`).
    func start(on connection: PulseConnection) -> Bool {
        guard case .sinkInput = kind else { return connect(on: connection.context) }
        guard let client = connection.newClientContext(named: "DeskAudio app capture") else { return false }
        self.client = client
        pulse.pa_context_set_state_callback(
            client,
            { client, userData in
                let tap = Unmanaged<PulseStreamTap>.fromOpaque(userData!).takeUnretainedValue()
                guard tap.client == client else { return }  // stopping (see `stop`)
                switch pulse.pa_context_get_state(client) {
                case PA_CONTEXT_READY where !tap.connect(on: client!), PA_CONTEXT_FAILED, PA_CONTEXT_TERMINATED:
                    tap.onEnd(tap)
                default:
                    break
                }
            }, me)
        return true
    }

    private var me: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    // Lock held: the record stream on `context`; false when refused at once.
    private func connect(on context: OpaquePointer) -> Bool {
        let name = kind == .clock ? "DeskAudio clock" : "DeskAudio app capture"
        guard let newStream = PulseConnection.newRecordStream(on: context, named: name, layout: layout) else { return false }
        stream = newStream
        if case .sinkInput(let index) = kind { _ = pulse.pa_stream_set_monitor_stream(newStream, index) }
        pulse.pa_stream_set_read_callback(
            newStream, { stream, _, userData in Unmanaged<PulseStreamTap>.fromOpaque(userData!).takeUnretainedValue().read(stream!) },
            me)
        pulse.pa_stream_set_state_callback(
            newStream,
            { stream, userData in
                let state = pulse.pa_stream_get_state(stream)
                let tap = Unmanaged<PulseStreamTap>.fromOpaque(userData!).takeUnretainedValue()
                guard state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED, tap.stream == stream else { return }
                tap.onEnd(tap)
            }, me)
        var attributes = PulseConnection.fragments(ofSamples: FrameDuration.ms10.samples, channels: layout.channels)
        let flags = pa_stream_flags_t(
            PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue | PA_STREAM_AUTO_TIMING_UPDATE.rawValue
                | PA_STREAM_INTERPOLATE_TIMING.rawValue)
        return pulse.pa_stream_connect_record(newStream, device, &attributes, flags) >= 0
    }

    /// True once the server made the stream ready.
    var isReady: Bool { stream.map { pulse.pa_stream_get_state($0) == PA_STREAM_READY } ?? false }

    /// Lock held: disconnects (the stream, then its own client if it has one); nothing more
    /// is read and `onEnd` is not called. Safe to call twice, and from `onEnd`. (libpulse
    /// keeps the callbacks of a stream or client that already failed, and disconnecting the
    /// client calls the stream's again: the callbacks check that the tap still holds what
    /// called them, so both are let go of first.)
    func stop() {
        if let stream {
            self.stream = nil
            pulse.pa_stream_set_state_callback(stream, nil, nil)
            pulse.pa_stream_set_read_callback(stream, nil, nil)
            _ = pulse.pa_stream_disconnect(stream)
            pulse.pa_stream_unref(stream)
        }
        if let client {
            self.client = nil
            pulse.pa_context_set_state_callback(client, nil, nil)
            pulse.pa_context_disconnect(client)
            pulse.pa_context_unref(client)
        }
    }

    // Main loop thread: everything readable into the ring (zeros of its length for the clock).
    private func read(_ stream: OpaquePointer) {
        PulseConnection.readFragments(of: stream) { samples, floats in
            guard let samples, kind != .clock else {
                writeSilence(floats)  // the clock, or a hole the server reports
                return
            }
            meter?.measure(samples)
            _ = ring.write(samples)
        }
        onRead(self, stream)
    }

    // `floats` zeros into the ring.
    private func writeSilence(_ floats: Int) {
        var left = floats
        while left > 0 {
            let taken = ring.write(UnsafeBufferPointer(rebasing: silence[0..<min(left, silence.count)]))
            guard taken > 0 else { break }
            left -= taken
        }
    }
}
