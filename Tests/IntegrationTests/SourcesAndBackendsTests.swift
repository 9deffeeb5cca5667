import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

/// Captures `seconds` of frames with (mic, app) on while `play` runs; returns the collector.
func capture(mic: Bool, app: Bool, play: () throws -> Void) throws -> FrameCollector {
    let collector = FrameCollector()
    set_audio_callback(FrameCollector.callback, collector.userData)
    defer {
        _ = enable_audio(false, false)
        set_audio_callback(nil, nil)
    }
    let gapsBefore = serverGaps()
    let mixBefore = mixerGaps()
    let status = enable_audio(mic, app)
    #expect(status == deskaudio_status.DESKAUDIO_OK.rawValue, "\(String(cString: deskaudio_last_error()!))")
    #expect(waitUntil(seconds: 3) { collector.count >= 10 }, "frames flow within 3 s")
    try play()
    Thread.sleep(forTimeInterval: 0.3)
    let gaps = serverGaps()
    collector.serverGaps = (gaps.skippedFrames - gapsBefore.skippedFrames, gaps.zeroCycles - gapsBefore.zeroCycles)
    let mix = mixerGaps()
    collector.mixerGaps = (mix.silenceFilled - mixBefore.silenceFilled, mix.droppedLate - mixBefore.droppedLate)
    if collector.serverSkips > 0 {
        print("measured: the server made gaps during this capture: \(collector.serverGaps.skippedFrames) frames' worth "
            + "skipped, \(collector.serverGaps.zeroCycles) cycles of zeros")
    }
    return collector
}

/// Plays 440 Hz into the test microphone and 1 kHz into the default sink, 1.5 s, both at 0.3.
func playMicAndAppTones(environment: [String: String] = [:]) throws {
    let mic = try ExternalTools.playTone(
        frequency: 440, amplitude: 0.3, seconds: 1.5, device: "deskaudio_micfeed", environment: environment)
    let app = try ExternalTools.playTone(
        frequency: 1000, amplitude: 0.3, seconds: 1.5, environment: environment)
    mic.waitUntilExit()
    app.waitUntilExit()
}

/// Captures app + mic during playMicAndAppTones(): expects frames flagged with both, an
/// unbroken sequence, and each tone within 1.5 dB of its level alone where it sounds (the
/// median of its 20 ms blocks: the gaps a loaded server makes lower only their own blocks,
/// R-MIX-GAPS); the blocks in gaps beyond the server's counted ones are a measured figure.
/// Returns both levels.
func expectAppAndMicMixed(
    environment: [String: String] = [:], sourceLocation: SourceLocation = #_sourceLocation
) throws -> (app: Double, mic: Double) {
    let collector = try capture(mic: true, app: true) { try playMicAndAppTones(environment: environment) }
    let frames = try collector.parsed()
    #expect(frames.contains { $0.header.flags.isSuperset(of: [.app, .mic]) }, sourceLocation: sourceLocation)
    let sequences = frames.map(\.header.sequence)
    #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, sourceLocation: sourceLocation)
    let decoded = try collector.decoded()
    let gaps = "the server's gaps \(collector.serverGaps.skippedFrames) frames' worth skipped and "
        + "\(collector.serverGaps.zeroCycles) cycles of zeros; the mix filled \(collector.mixerGaps.silenceFilled) "
        + "frames with silence and dropped \(collector.mixerGaps.droppedLate) late"
    var levels: [Double] = []
    for (name, frequency) in [("440 Hz (mic)", 440.0), ("1 kHz (app)", 1000.0)] {
        let tone = SignalAnalysis.toneInItsBlocks(decoded, frequency: frequency)
        let blocks = "\(tone.lowBlocks) of \(tone.blocks) 20 ms blocks more than 3 dB low"
        #expect(
            abs(tone.level - quietSineLevel) <= 1.5, "\(name) at \(tone.level) dBFS; \(blocks); \(gaps)",
            sourceLocation: sourceLocation)
        // Each frame's worth the server skipped or zeroed may break two 20 ms blocks.
        let credited = 2 * Int(collector.serverSkips)
        expectWithinBudget(
            "\(name) 20 ms blocks in gaps beyond the server's", 100 * Double(max(tone.lowBlocks - credited, 0))
                / Double(max(tone.blocks, 1)), unit: "%", .atMost(5), gaps, sourceLocation: sourceLocation)
        levels.append(tone.level)
    }
    return (levels[1], levels[0])
}

/// Level of a 0.3-amplitude sine: −13.5 dBFS.
let quietSineLevel = 20 * log10(0.3 / 2.0.squareRoot())

extension RealServerTests {
    @Suite struct SourcesAndBackendsTests {
        @Test func microphoneAloneCarriesItsToneAndNotTheAppAudio() throws {
            let collector = try capture(mic: true, app: false) { try playMicAndAppTones() }
            let frames = try collector.parsed()
            // A frame after a quantum the server skipped carries TIME_STEP as well (run 38 on
            // Debian 13: one skip, one such frame): at most one per skip.
            #expect(frames.allSatisfy { $0.header.flags.subtracting([.afterGap, .timeStep]) == [.mic] })
            let timeSteps = frames.filter { $0.header.flags.contains(.timeStep) }.count
            expectWithinBudget(
                "TIME_STEP frames beyond the server's gaps", Double(max(timeSteps - Int(collector.serverSkips), 0)),
                unit: "frames", .atMost(3), "\(timeSteps) TIME_STEP frames, \(collector.serverSkips) skips")
            let tone = ToneCheck(try collector.decoded())
            #expect(
                toneBlocks(played: 150, gapFrames: collector.serverSkips).contains(tone.loudFrames.count),
                "1.5 s of tone: \(tone.loudFrames.count), the server's gaps \(collector.serverSkips)")
            let (mic, app) = expectMicAloneWithoutAppAudio(tone, serverSkips: collector.serverSkips)
            print("measured: mic only: 440 Hz at \(mic) dBFS, 1 kHz at \(app) dBFS")
        }

        @Test func appAndMicAreMixedEachAtItsOwnLevel() throws {
            let (app, mic) = try expectAppAndMicMixed()
            print(
                "measured: app + mic mixed: 1 kHz at \(app) dBFS, 440 Hz at \(mic) dBFS (each alone: \(quietSineLevel))"
            )
        }

        @Test func switchingSourcesWhileRunningKeepsTheSequence() throws {
            let collector = FrameCollector()
            set_audio_callback(FrameCollector.callback, collector.userData)
            for (mic, app) in [(false, true), (true, true), (true, false), (false, true)] {
                #expect(enable_audio(mic, app) == deskaudio_status.DESKAUDIO_OK.rawValue)
                let before = collector.count
                #expect(waitUntil(seconds: 3) { collector.count >= before + 20 })
            }
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            set_audio_callback(nil, nil)
            let frames = try collector.parsed()
            let sequences = frames.map(\.header.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "sequence continuous")
            let clocks = frames.map(\.header.sampleClock)
            #expect(zip(clocks, clocks.dropFirst()).allSatisfy { $1 == $0 + 480 }, "sample clock continuous")
            let kinds = frames.map { $0.header.flags.subtracting(.afterGap).rawValue }
            #expect(kinds.contains(AudioFrameHeader.Flags.mic.rawValue))
            #expect(kinds.contains(AudioFrameHeader.Flags([.app, .mic]).rawValue))
        }

        @Test func pulseBackendThroughPipeWirePulseCapturesTheTone() throws {
            #expect(deskaudio_set_backend("pulse") == deskaudio_status.DESKAUDIO_OK.rawValue)
            defer { _ = deskaudio_set_backend("auto") }
            var backend = ""
            var tap: ToneCheck?
            let collector = try capture(mic: false, app: true) {
                backend = String(cString: deskaudio_backend()!)
                (_, tap) = try MonitorTap.recording {
                    try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 1.5).waitUntilExit()
                }
            }
            #expect(backend == "pulse")
            #expect(String(cString: deskaudio_backend()!) == "")
            let tone = ToneCheck(try collector.decoded())
            let sinkSilence = sinkSilenceBlocks(in: tone, playedSeconds: 1.5, frames: try collector.parsed().map(\.header))
            let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
                tone, tap: tap, serverSkips: collector.serverSkips, sinkSilence: sinkSilence)
            print("measured: pulse backend on pipewire-pulse: \(frequency) Hz, \(level) dBFS")
        }

        @Test func backendNamesAreValidated() {
            #expect(deskaudio_set_backend(nil) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            #expect(
                deskaudio_set_backend("alsa") == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            #expect(String(cString: deskaudio_last_error()!).contains("alsa"))
            #expect(deskaudio_set_backend("auto") == deskaudio_status.DESKAUDIO_OK.rawValue)
        }

        @Test func theEnvironmentVariableSelectsTheBackend() throws {
            for backend in ["pipewire", "pulse"] {
                let result = try ExternalTools.run(
                    [recordExample, "--seconds", "0.5", "/tmp/deskaudio-env-\(backend).opus"],
                    environment: ["DESKAUDIO_BACKEND": backend])
                #expect(result.status == 0, "\(result.error)")
                #expect(result.output.contains("backend \(backend)"), "\(result.output)")
                try? FileManager.default.removeItem(atPath: "/tmp/deskaudio-env-\(backend).opus")
            }
            let bad = try ExternalTools.run(
                [recordExample, "--seconds", "0.5", "/tmp/deskaudio-env-bad.opus"],
                environment: ["DESKAUDIO_BACKEND": "oss"])
            #expect(bad.status == 1)
            #expect(bad.error.contains("DESKAUDIO_BACKEND=oss"), "\(bad.error)")
        }
    }
}
