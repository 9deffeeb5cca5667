import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests.SendReceiveTests {
    /// What the host records from the viewer's microphone during one `deskaudio talk` session
    /// in a room: the host's 1320 Hz played by the viewer's speakers (the default sink) and,
    /// through a loopback with 60 ms of latency, heard by its microphone (the default source,
    /// fed by deskaudio_micfeed), the viewer speaking 440 Hz into it from 6 s to 8 s.
    /// Returns the host's recording (stereo) and talk's summary.
    static func talkInARoom(echoCancel: Bool) throws -> (recording: [Float], summary: String) {
        let room = try ExternalTools.run([
            "pactl", "load-module", "module-loopback", "source=deskaudio_sink.monitor", "sink=deskaudio_micfeed",
            "latency_msec=60", "source_dont_move=true", "sink_dont_move=true",
        ])
        try #require(room.status == 0, "the room (module-loopback): \(room.error)")
        defer { _ = try? ExternalTools.run(["pactl", "unload-module", room.output.trimmingCharacters(in: .whitespacesAndNewlines)]) }
        let (hostPort, viewerPort) = (try UDPRelay.freePort(), try UDPRelay.freePort())
        // The host: its microphone from the viewer, and its sound (deskaudio_other's) to the viewer.
        let (microphone, _, _) = try ExternalTools.start(
            [commandLineTool, "receive", "--listen", "\(hostPort)", "--as-mic", "viewer_mic", "--seconds", "11"])
        defer { if microphone.isRunning { kill(microphone.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 0.5)
        let tap = try MonitorTap(source: "viewer_mic")
        let (sender, _, _) = try ExternalTools.start(
            [commandLineTool, "send", "--to", "127.0.0.1:\(viewerPort)", "--device", "deskaudio_other", "--seconds", "10"])
        defer { if sender.isRunning { kill(sender.processIdentifier, SIGKILL) } }
        let hostSound = try ExternalTools.playTone(frequency: 1320, amplitude: 0.3, seconds: 9.5, device: "deskaudio_other")
        defer { if hostSound.isRunning { kill(hostSound.processIdentifier, SIGKILL) } }
        let (talk, talkOutput, talkErrors) = try ExternalTools.start(
            [commandLineTool, "talk", "127.0.0.1:\(hostPort)", "--listen", "\(viewerPort)", "--seconds", "9"]
                + (echoCancel ? [] : ["--no-echo-cancel"]))
        defer { if talk.isRunning { kill(talk.processIdentifier, SIGKILL) } }
        Thread.sleep(forTimeInterval: 6)
        try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 2, device: "deskaudio_micfeed").waitUntilExit()
        talk.waitUntilExit()
        let recording = try tap.finish()
        let summary = String(decoding: talkOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: talkErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(talk.terminationStatus == 0, "talk: \(errors.suffix(300))")
        return (recording, summary)
    }

    /// A stretch's level of `frequency` in the left channel, dBFS (-200 for none).
    static func level(_ recording: [Float], _ seconds: ClosedRange<Double>, frequency: Double) -> Double {
        let left = SignalAnalysis.left(recording[...])
        let range = Int(seconds.lowerBound * 48_000)..<min(Int(seconds.upperBound * 48_000), left.count)
        guard range.count > 4_800 else { return -200 }
        return SignalAnalysis.toneLevelDecibels(Array(left[range]), frequency: frequency)
    }

    /// `deskaudio talk` as a viewer runs it: the host's sound played, the microphone sent
    /// back. Without cancellation the host hears itself (the control: the room works); with
    /// it, the echo is down by a measured figure and the viewer's own voice comes through.
    @Test func talkSendsTheViewersVoiceWithoutTheHostsEcho() throws {
        let control = try Self.talkInARoom(echoCancel: false)
        let cancelled = try Self.talkInARoom(echoCancel: true)
        // The tap starts 0.5 s before the host's sound; talk's first second settles.
        let farEndOnly = 3.0...5.5, doubleTalk = 6.5...7.5
        let echo = (Self.level(control.recording, farEndOnly, frequency: 1320),
                    Self.level(cancelled.recording, farEndOnly, frequency: 1320))
        let voice = (Self.level(control.recording, doubleTalk, frequency: 440),
                     Self.level(cancelled.recording, doubleTalk, frequency: 440))
        #expect(echo.0 > -35, "without cancellation the host hears its own 1320 Hz: \(echo.0) dBFS; \(control.summary)")
        #expect(voice.0 > -25, "the viewer's 440 Hz reaches the host: \(voice.0) dBFS")
        expectWithinBudget(
            "talk: the host's echo, cancelled against not, far end only", echo.1 - echo.0, unit: "dB", .atMost(-15),
            "\(echo.1) against \(echo.0) dBFS; \(cancelled.summary)")
        expectWithinBudget(
            "talk: the viewer's voice in double talk, cancelled against not", abs(voice.1 - voice.0), unit: "dB", .atMost(10),
            "\(voice.1) against \(voice.0) dBFS")
        print("measured: talk in a room: the host's 1320 Hz \(echo.0) dBFS without cancellation, \(echo.1) with; "
            + "the viewer's 440 Hz \(voice.0) and \(voice.1); \(cancelled.summary)")
    }
}
