/// PulseAudio's API (libpulse, loaded when first used), against a PulseAudio daemon or
/// pipewire-pulse: each stream on a connection of its own.
final class PulseBackend: CaptureBackend {
    let kind = AudioBackend.pulse
    var serverName: String { kind.serverName }

    /// `options.linkingItself` is ignored: the PulseAudio API has no links (on pipewire-pulse,
    /// a stream the session manager does not link stays silent). `options.periodSamples`
    /// sets the fragment of a device's or monitor's stream (on pipewire-pulse
    /// `options.pipeWireQuantum` instead, when set); applications' streams, mixed by the
    /// library, keep 10 ms fragments.
    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, options: StreamOptions)
        throws(DeskAudioError) -> CaptureStream
    {
        let virtualSink = try query { connection, deadline throws(DeskAudioError) in
            try PulseNullSink.unloadLeftovers(on: connection, deadline: deadline)
            guard options.ensuresSink, target == .defaultSinkMonitor else { return nil as PulseVirtualSink? }
            return try PulseVirtualSink.loadIfNoSink(on: connection, deadline: deadline)
        }
        guard case .applications(let selection) = target else {
            let stream = PulseCapture(
                feed: feed, wake: wake, periodSamples: options.periodSamples, pipeWireQuantum: options.pipeWireQuantum,
                layout: options.layout, onStop: virtualSink.map { sink in { sink.unload() } })
            if let virtualSink {
                feed.notices.log(.info, "\(feed.name): the server has no sink: loaded \(virtualSink.name) for this capture")
                feed.reportDeviceChange(to: "\(virtualSink.name).monitor")
            }
            // The virtual sink by name: it is the default only once the server (or its session
            // manager) has made it so.
            try stream.start(virtualSink.map { .sinkMonitor(named: $0.name) } ?? target)
            return stream
        }
        guard selection.mutesHost else {
            let stream = PulseAppCapture(selection: selection, feed: feed, wake: wake, layout: options.layout)
            try stream.start()
            return stream
        }
        // Muted: the chosen streams are moved to a silent sink of the library's, whose
        // monitor is recorded.
        let mute = PulseHostMute(selection: selection)
        do throws(DeskAudioError) { try mute.start() } catch {
            mute.finish()
            throw error
        }
        let stream = PulseCapture(
            feed: feed, wake: wake, periodSamples: options.periodSamples, pipeWireQuantum: options.pipeWireQuantum,
            layout: options.layout, onStop: { mute.finish() })
        try stream.start(.sinkMonitor(named: mute.sinkName))
        return stream
    }

    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        try query { connection, deadline throws(DeskAudioError) in try PulseDevices.read(on: connection, deadline: deadline) }
    }

    func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        try query { connection, deadline throws(DeskAudioError) in
            try PulsePlaybackStreams.read(on: connection, deadline: deadline)
        }
    }

    func serverReport() throws(DeskAudioError) -> ServerReport {
        try query { connection, deadline throws(DeskAudioError) in
            try PulseServerReport.read(on: connection, deadline: deadline)
        }
    }

    /// Runs `body` on a connection of its own, main loop lock held, within 3 s.
    private func query<T>(_ body: (PulseConnection, UInt64) throws(DeskAudioError) -> T) throws(DeskAudioError) -> T {
        let deadline = LibraryClock.system.nowNs() + 3_000_000_000
        let connection = try PulseConnection(deadline: deadline)
        connection.lock()
        defer { connection.unlock() }
        return try body(connection, deadline)
    }
}
