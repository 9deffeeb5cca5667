import Glibc

/// "Why is it silent?": checks, in order, what makes a capture hear nothing, and says each
/// in one line with the fix: whether a server is reachable (and which sockets were tried),
/// the backend and server, the default sink (muted, at zero volume, suspended), which
/// applications play and to which sink, what app audio and the microphone record, their
/// levels over a short listen, and what the zero gate did meanwhile. Stops after a check
/// that leaves nothing further to look at (no server).
public enum Diagnosis {
    /// One check's outcome.
    public struct Finding: Sendable, Equatable {
        /// How much it matters.
        public enum Severity: Int32, Sendable, Comparable, CaseIterable {
            /// As it should be.
            case ok = 0
            /// May explain silence; the text says what to do.
            case warning = 1
            /// Explains silence; the text says what to do.
            case problem = 2

            public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs.rawValue < rhs.rawValue }
        }

        /// How much it matters.
        public var severity: Severity
        /// One line: what was found and, unless it is fine, the fix.
        public var text: String
    }

    /// Runs the checks through `backend` (nil: automatic, or DESKAUDIO_BACKEND), listening
    /// `listenMs` to app audio and the microphone with a capture of its own. `host`, the
    /// capture the host runs, is left alone; while it captures, a last finding says what
    /// it sent during the listen (its zero gate closed, or frames not arriving). Blocks
    /// for the listen plus up to 3 s per server query.
    public static func run(backend requested: AudioBackend? = nil, listenMs: Int = 1000, host: AudioService? = nil)
        -> [Finding]
    {
        let service = AudioService()
        service.setBackend(requested)
        service.setFrameHandler { _ in }  // frames are encoded and counted as for a host
        var findings: [Finding] = []
        func add(_ severity: Finding.Severity, _ text: String) { findings.append(Finding(severity: severity, text: text)) }

        let report: ServerReport
        let backend: AudioBackend
        do throws(DeskAudioError) {
            (report, backend) = try service.serverReport()
        } catch {
            add(.problem, "no audio server answered (\(error.message)); sockets tried: \(socketsTried()). "
                + "Start one (systemctl --user start pipewire pipewire-pulse wireplumber), or run as the desktop's "
                + "user, whose XDG_RUNTIME_DIR holds them")
            return findings
        }
        add(.ok, "backend \(backend.rawValue): \(report.server)")
        var details = report
        if backend == .pipewire, let pulse = try? service.serverReport(on: .pulse).report {
            details.defaultSink = pulse.defaultSink ?? report.defaultSink
            details.playing = pulse.playing
        }
        checkDefaultSink(details, add)
        checkPlaying(details, add)
        checkSources(details, add)
        let hostBefore = host?.activeBackend == nil ? nil : host?.stats()
        listen(service, milliseconds: listenMs, hasSink: details.defaultSink != nil, add)
        if let host, let hostBefore, host.activeBackend != nil {
            checkHostCapture(before: hostBefore, after: host.stats(), milliseconds: listenMs, add)
        }
        return findings
    }

    /// The sockets a client tries, from the environment.
    static func socketsTried() -> String {
        if let user = SessionTarget.user {
            return "PipeWire \(user.pipeWireSocket), PulseAudio \(user.pulseServer) (user \(user.uid)'s session)"
        }
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let runtime = variable("XDG_RUNTIME_DIR")
        let pipewire = variable("PIPEWIRE_REMOTE").map { $0.hasPrefix("/") ? $0 : "\(runtime ?? "$XDG_RUNTIME_DIR")/\($0)" }
            ?? "\(runtime ?? "(XDG_RUNTIME_DIR unset)")/pipewire-0"
        let pulse = variable("PULSE_SERVER") ?? "\(runtime ?? "(XDG_RUNTIME_DIR unset)")/pulse/native"
        return "PipeWire \(pipewire), PulseAudio \(pulse)"
    }

    private static func checkDefaultSink(_ report: ServerReport, _ add: (Finding.Severity, String) -> Void) {
        guard let sink = report.defaultSink else {
            return add(.problem, "no default sink: applications have nowhere to play (a machine with no sound card); "
                + "let the capture make one (deskaudio_set_ensure_sink(), deskaudio record --ensure-sink), or create one "
                + "(pactl load-module module-null-sink sink_name=virtual) and make it the default")
        }
        if sink.isMuted == true {
            add(.warning, "the default sink \(sink.name) is muted: its monitor, which app audio records, is silent too; "
                + "unmute it (pactl set-sink-mute \(sink.name) 0)")
        } else if sink.volumePercent == 0 {
            add(.warning, "the default sink \(sink.name) is at 0 % volume: its monitor is silent too; raise it "
                + "(pactl set-sink-volume \(sink.name) 100%)")
        } else if sink.isSuspended == true {
            add(.warning, "the default sink \(sink.name) is suspended: nothing plays to it; play something, or check "
                + "where the applications play (below)")
        } else {
            let volume = sink.volumePercent.map { ", volume \($0) %" } ?? ""
            add(.ok, "default sink \(sink.name)\(sink.isMuted == false ? ", not muted" : "")\(volume)")
        }
    }

    private static func checkPlaying(_ report: ServerReport, _ add: (Finding.Severity, String) -> Void) {
        guard !report.playing.isEmpty else {
            return add(.warning, "no application is playing: there is nothing to hear yet")
        }
        let defaultSink = report.defaultSink?.name
        for playing in report.playing {
            let stream = playing.stream
            let who = "\(stream.applicationName.isEmpty ? stream.nodeName : stream.applicationName) (pid \(stream.processID))"
            let state = stream.isRunning ? "playing" : "paused"
            if playing.sink.isEmpty || playing.sink == defaultSink {
                add(.ok, "\(who) is \(state)\(playing.sink.isEmpty ? "" : " to \(playing.sink)")")
            } else {
                add(.warning, "\(who) is \(state) to \(playing.sink), not the default sink: app audio records only "
                    + "the default sink's monitor; record that sink (--device \(playing.sink)) or the app (--only)")
            }
        }
    }

    private static func checkSources(_ report: ServerReport, _ add: (Finding.Severity, String) -> Void) {
        if let sink = report.defaultSink?.name {
            add(.ok, "app audio records \(sink)'s monitor (what the machine plays)")
        }
        guard let source = report.defaultSource else {
            return add(.warning, "no default source: the microphone cannot be captured; plug one in or choose one")
        }
        if report.defaultSourceIsMonitor == true {
            add(.warning, "the default source \(source) is a sink's monitor, not a microphone: the microphone "
                + "capture refuses it; make a real microphone the default (pactl set-default-source NAME)")
        } else {
            add(.ok, "the microphone records \(source)")
        }
    }

    /// Captures app audio and the microphone for a while and reports their levels and the gate.
    private static func listen(
        _ service: AudioService, milliseconds: Int, hasSink: Bool, _ add: (Finding.Severity, String) -> Void
    ) {
        let before = service.stats()
        var micFailed = false
        do throws(DeskAudioError) {
            try service.enable(mic: true, app: true)
        } catch {
            micFailed = true
            add(.problem, "capturing app audio and the microphone failed: \(error.message)")
            do throws(DeskAudioError) { try service.enable(mic: false, app: true) } catch {
                return add(.problem, "capturing app audio alone failed too: \(error.message)")
            }
        }
        usleep(UInt32(milliseconds) * 1000)
        let after = service.stats()
        try? service.enable(mic: false, app: false)
        for (name, level, hint) in [
            ("app audio", after.app, "nothing the machine plays reaches the default sink"),
            ("the microphone", after.mic, "the default source is muted or hears nothing"),
        ] {
            guard let level else {
                if !(micFailed && name == "the microphone") { add(.problem, "\(name) was not captured") }
                continue
            }
            if level.peakDBFS <= -120 {
                add(.warning, "\(name) is digital silence over \(milliseconds) ms: \(hint) (after 8 s of it the "
                    + "zero gate stops sending until sound returns)")
            } else {
                add(.ok, "\(name): peak \(decibels(level.peakDBFS)), RMS \(decibels(level.rmsDBFS))")
            }
        }
        let captured = after.framesCaptured - before.framesCaptured
        let sent = after.framesSent - before.framesSent
        let gated = after.framesGated - before.framesGated
        if captured == 0 && !hasSink {
            add(.problem, "no audio arrived in \(milliseconds) ms: with no sink there is nothing to record (above)")
        } else if captured == 0 {
            add(.problem, "no audio arrived in \(milliseconds) ms though the streams opened: the session manager "
                + "did not link them (restart the audio server: systemctl --user restart pipewire)")
        } else if gated > 0 {
            add(.warning, "the zero gate held back \(gated) of \(captured) frames: 8 s of digital silence closed it; "
                + "it opens with the first frame that is not all zero")
        } else {
            add(.ok, "zero gate open: \(sent) of \(captured) frames sent")
        }
    }

    /// What the host's own capture did during the listen.
    private static func checkHostCapture(
        before: CaptureStats, after: CaptureStats, milliseconds: Int, _ add: (Finding.Severity, String) -> Void
    ) {
        let captured = after.framesCaptured - before.framesCaptured
        let sent = after.framesSent - before.framesSent
        let gated = after.framesGated - before.framesGated
        let backend = after.backend?.rawValue ?? "?"
        if captured == 0 {
            add(.problem, "your capture (\(backend)) captured no frame in \(milliseconds) ms: its streams are not fed "
                + "(a STALLED event says so); restart capture, or the session manager if nothing links streams")
        } else if sent == 0 && gated > 0 {
            add(.warning, "your capture's zero gate is closed: all \(captured) frames in \(milliseconds) ms were "
                + "digital silence (it closes after 800 silent frames, 8 s, and opens with the first frame that is "
                + "not all zero); nothing it records is playing")
        } else {
            add(.ok, "your capture (\(backend)) sent \(sent) of \(captured) frames in \(milliseconds) ms")
        }
    }

    private static func decibels(_ value: Float) -> String { "\(Float(Int(value * 10)) / 10) dBFS" }
}
