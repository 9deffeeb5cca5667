import DeskAudio
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests.SendReceiveTests {
    /// What the host records from the viewer's microphone during one `deskaudio talk` session
    /// in a room: the host's noise played by the viewer's speakers (the default sink) and,
    /// through a loopback with 60 ms of latency, heard by its microphone (the default source,
    /// fed by deskaudio_micfeed), the viewer speaking 440 Hz into it for 2 s from 8 s on.
    /// Returns the host's recording (stereo), talk's summary, and when (s into the recording)
    /// the tone was started and talk's first frames reached the host (the microphone records
    /// exact zeros before them).
    static func talkInARoom(
        echoCancel: Bool, environment: [String: String] = [:]
    ) throws -> (recording: [Float], summary: String, toneStartSeconds: Double, talkStartSeconds: Double) {
        let room = try ExternalTools.run([
            "pactl", "load-module", "module-loopback", "source=deskaudio_sink.monitor", "sink=deskaudio_micfeed",
            "latency_msec=60", "source_dont_move=true", "sink_dont_move=true",
        ], environment: environment)
        try #require(room.status == 0, "the room (module-loopback): \(room.error)")
        defer {
            let module = room.output.trimmingCharacters(in: .whitespacesAndNewlines)
            _ = try? ExternalTools.run(["pactl", "unload-module", module], environment: environment)
        }
        let (hostPort, viewerPort) = (try UDPRelay.freePort(), try UDPRelay.freePort())
        // The host: its microphone from the viewer, and its sound (deskaudio_other's) to the viewer.
        let (microphone, _, _) = try ExternalTools.start(
            [commandLineTool, "receive", "--listen", "\(hostPort)", "--as-mic", "viewer_mic", "--seconds", "13"],
            environment: environment)
        defer { if microphone.isRunning { kill(microphone.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.5)
        let tap = try MonitorTap(source: "viewer_mic", environment: environment)
        let tapStartNs = MonotonicClock.nowNs()
        let (sender, _, _) = try ExternalTools.start(
            [commandLineTool, "send", "--to", "127.0.0.1:\(viewerPort)", "--device", "deskaudio_other", "--seconds", "12"],
            environment: environment)
        defer { if sender.isRunning { kill(sender.processIdentifier, SIGKILL) } }
        let hostSound = try ExternalTools.play(Self.hostNoise, device: "deskaudio_other", environment: environment)
        defer { if hostSound.isRunning { kill(hostSound.processIdentifier, SIGKILL) } }
        let (talk, talkOutput, talkErrors) = try ExternalTools.start(
            [commandLineTool, "talk", "127.0.0.1:\(hostPort)", "--listen", "\(viewerPort)", "--seconds", "11"]
                + (echoCancel ? [] : ["--no-echo-cancel"]), environment: environment)
        defer { if talk.isRunning { kill(talk.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 8)
        let toneStartSeconds = Double(MonotonicClock.nowNs() - tapStartNs) / 1e9
        try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 2, device: "deskaudio_micfeed", environment: environment)
            .waitUntilExit()
        talk.waitUntilExit()
        let recording = try tap.finish()
        let summary = String(decoding: talkOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: talkErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(talk.terminationStatus == 0, "talk: \(errors.suffix(300))")
        let firstSound = SignalAnalysis.left(recording[...]).firstIndex { $0 != 0 } ?? recording.count / 2
        return (recording, summary, toneStartSeconds, Double(firstSound) / 48_000)
    }

    /// The host's sound: 11.5 s of seeded white noise at -16.8 dBFS (uniform, ±0.25), the
    /// same in both channels: broadband, so the canceller's delay and path are unambiguous.
    static let hostNoise: [Float] = {
        var state: UInt32 = 12_345
        return (0..<(11 * 48_000 + 24_000)).flatMap { _ -> [Float] in
            state = state &* 1_664_525 &+ 1_013_904_223
            let value = (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.5
            return [value, value]
        }
    }()

    /// A stretch's level in the left channel, dBFS: of everything (nil), or of `frequency`
    /// only, as the median of its 100 ms blocks (a tone that started late under load, or a
    /// glitch, lowers a few blocks, not the level).
    static func level(_ recording: [Float], _ seconds: ClosedRange<Double>, frequency: Double?) -> Double {
        let left = SignalAnalysis.left(recording[...])
        let range = Int(seconds.lowerBound * 48_000)..<min(Int(seconds.upperBound * 48_000), left.count)
        guard range.count > 4_800 else { return -200 }
        guard let frequency else { return SignalAnalysis.rmsDecibels(Array(left[range])) }
        return SignalAnalysis.medianBlockLevel(left[range], frequency: frequency)
    }

    /// `deskaudio talk` as a viewer runs it, on PipeWire and on plain PulseAudio: the host's
    /// sound played, the microphone sent back. Without cancellation the host hears itself (the
    /// control: the room works); with it, the echo is down by a measured figure and the
    /// viewer's own voice comes through.
    @Test(arguments: ["pipewire", "pulseaudio"]) func talkSendsTheViewersVoiceWithoutTheHostsEcho(server: String) throws {
        if server == "pulseaudio" {
            try withPlainPulseAudio { try talkInTheRoom(server: server, environment: $0) }
        } else {
            try talkInTheRoom(server: server, environment: [:])
        }
    }

    func talkInTheRoom(server: String, environment: [String: String]) throws {
        let control = try Self.talkInARoom(echoCancel: false, environment: environment)
        let cancelled = try Self.talkInARoom(echoCancel: true, environment: environment)
        // The far end alone from 2 s after talk's first frames reached the host (the delay
        // found, the filter settled) to the tone, at most 2.5 s of it: talk starts sending
        // 0.7-1.3 s into the recording (measured), later when the machine is slow to start it.
        // The near end from when its tone was started (R-TALK-TONE).
        typealias Run = (recording: [Float], summary: String, toneStartSeconds: Double, talkStartSeconds: Double)
        func farEndOnly(_ run: Run) throws -> ClosedRange<Double> {
            let start = run.talkStartSeconds + 2
            let end = min(start + 2.5, run.toneStartSeconds - 0.3)
            try #require(
                end - start >= 1,
                "talk's frames reached the host \(run.talkStartSeconds) s in and the tone started at \(run.toneStartSeconds) s: no second of the far end alone")
            return start...end
        }
        func doubleTalk(_ run: Run) -> ClosedRange<Double> {
            (run.toneStartSeconds + 0.2)...(run.toneStartSeconds + 2.2)
        }
        let echo = (Self.level(control.recording, try farEndOnly(control), frequency: nil),
                    Self.level(cancelled.recording, try farEndOnly(cancelled), frequency: nil))
        let voice = (Self.level(control.recording, doubleTalk(control), frequency: 440),
                     Self.level(cancelled.recording, doubleTalk(cancelled), frequency: 440))
        #expect(echo.0 > -30, "without cancellation the host hears its own noise: \(echo.0) dBFS; \(control.summary)")
        #expect(voice.0 > -25, "the viewer's 440 Hz reaches the host: \(voice.0) dBFS")
        // Gross budgets. The default canceller: speexdsp on Debian 12, 30-33 dB down measured on
        // PipeWire, 12-15 on plain PulseAudio (it stops there whichever side, player or
        // microphone, goes through libpulse: R-ECHO-PULSE); WebRTC's AEC3 on Debian 13, 30 dB
        // on PipeWire; each so with two busy loops beside the test too (R-ECHO-STAMPS).
        // scripts/test runs it alone (R-TALK-LOAD). AEC3 on plain PulseAudio 17 goes from run
        // to run anywhere from 0.6 to 28 dB down, alone (speexdsp there: 12.4-14.4):
        // R-ECHO-PULSE's, recorded and not judged until that is solved.
        let echoFigure = "talk: the host's echo, cancelled against not, far end only (\(server))"
        if server == "pulseaudio" && cancelled.summary.contains("AEC3") {
            MeasurementReport.record(
                echoFigure, echo.1 - echo.0, unit: "dB", budget: .atMost(-6), test: "TalkTests.swift:\(#function)", judged: false)
        } else {
            expectWithinBudget(
                echoFigure, echo.1 - echo.0, unit: "dB", .atMost(server == "pipewire" ? -20 : -6),
                "\(echo.1) against \(echo.0) dBFS; \(cancelled.summary)")
        }
        // The near end in double talk, the median of its 100 ms blocks: on PipeWire 0.1 to 13.7 dB
        // down (speexdsp's suppressor takes some of it while the echo plays; AEC3's 0.9-1.4). On PulseAudio,
        // where the echo left is 12-15 dB down only, it takes from 3 to 31 dB (clean-clone runs
        // 42 and 43): R-ECHO-PULSE's, recorded and not judged until that is solved.
        let nearEnd = "talk: the viewer's voice in double talk, cancelled against not (\(server))"
        if server == "pipewire" {
            expectWithinBudget(nearEnd, abs(voice.1 - voice.0), unit: "dB", .atMost(20), "\(voice.1) against \(voice.0) dBFS")
        } else {
            MeasurementReport.record(
                nearEnd, abs(voice.1 - voice.0), unit: "dB", budget: .atMost(10), test: "TalkTests.swift:\(#function)",
                judged: false)
        }
        print("measured: talk in a room (\(server)): talk's frames reached the host \(control.talkStartSeconds) and "
            + "\(cancelled.talkStartSeconds) s in; the host's noise \(echo.0) dBFS without cancellation, \(echo.1) with; "
            + "the viewer's 440 Hz \(voice.0) and \(voice.1); \(cancelled.summary)")
    }
}
