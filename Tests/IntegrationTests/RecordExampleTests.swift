import Foundation
import TestSupport
import Testing

/// examples-c/record, built by `make -C examples-c` (scripts/test does it first).
let recordExample = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("examples-c/record").path

extension RealServerTests {
    @Suite struct RecordExampleTests {
        @Test func writesAStandardOggOpusFileThatHoldsTheTone() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "deskaudio-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let opus = directory.appendingPathComponent("out.opus").path
            let wav = directory.appendingPathComponent("out.wav").path

            let (recorder, output, _) = try ExternalTools.start([recordExample, "--seconds", "3", opus])
            Thread.sleep(forTimeInterval: 0.4)  // and 0.3 s for the tap to start
            let (_, tap) = try MonitorTap.recording {
                try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 1.5).waitUntilExit()
            }
            recorder.waitUntilExit()
            let summary = String(
                decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(recorder.terminationStatus == 0)
            #expect(summary.hasPrefix("frames "), "summary line: \(summary)")

            let info = try ExternalTools.run(["opusinfo", opus])
            #expect(info.status == 0, "opusinfo: \(info.output) \(info.error)")
            #expect(info.output.contains("Pre-skip: 120"))
            #expect(info.output.contains("Channels: 2"))
            #expect(!info.output.contains("WARNING"), "opusinfo warns: \(info.output)")
            let decode = try ExternalTools.run(["opusdec", "--quiet", "--rate", "48000", opus, wav])
            #expect(decode.status == 0, "opusdec: \(decode.error)")

            let tone = ToneCheck(try ExternalTools.readWav16(wav))
            #expect(
                (145...155).contains(tone.loudFrames.count),
                "1.5 s of tone: \(tone.loudFrames.count) loud frames")
            // Frames' worth the server moved past the capture, which the library filled with
            // silence (the summary's "skipped by the server N"): once in a CI run with a core
            // kept busy, two 10 ms blocks 1-1.5 dB low with the tap clean.
            let skipped = summary.firstMatch(of: /skipped by the server (\d+)/).flatMap { UInt64($0.1) }
            #expect(skipped != nil, "summary line: \(summary)")
            let (frequency, level) = expectUnbrokenHalfScale1kHzTone(tone, tap: tap, serverSkips: skipped ?? 0)
            print(
                "measured: examples-c/record → opusdec: \(frequency) Hz, \(level) dBFS; "
                    + summary.trimmingCharacters(in: .whitespacesAndNewlines))
        }

        @Test func reportsAMissingServerClearly() throws {
            let result = try ExternalTools.run(
                [recordExample, "--seconds", "1", "/tmp/deskaudio-never-written.opus"],
                environment: ["XDG_RUNTIME_DIR": "/tmp/deskaudio-no-servers-here", "PULSE_SERVER": ""])
            #expect(result.status == 1)
            #expect(result.error.contains("no audio server"), "stderr: \(result.error)")
            #expect(result.error.contains("neither PipeWire nor PulseAudio"), "stderr: \(result.error)")
            #expect(!FileManager.default.fileExists(atPath: "/tmp/deskaudio-never-written.opus"))
        }
    }
}
