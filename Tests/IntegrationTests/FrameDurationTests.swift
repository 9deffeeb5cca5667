import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

/// Expects `frames` to be one unbroken run: sequence +1 and sample clock + the previous
/// frame's length from one frame to the next.
private func expectContinuous(
    _ frames: [(header: AudioFrameHeader, payload: [UInt8])], sourceLocation: SourceLocation = #_sourceLocation
) {
    let breaks = zip(frames, frames.dropFirst()).filter { previous, next in
        next.header.sequence != previous.header.sequence &+ 1
            || next.header.sampleClock != previous.header.sampleClock + UInt64(previous.header.frameSamples)
    }
    #expect(breaks.isEmpty, "\(breaks.count) breaks in sequence or sample clock", sourceLocation: sourceLocation)
}

/// Captures app audio in frames of `microseconds`, a PipeWire graph asked for a quantum of
/// `pipeWireQuantum` samples (0: the library's default), while a 2 s 1 kHz tone plays (after
/// `whileCapturing`, run once the capture has started); checks the frames' length and
/// continuity and the decoded tone; returns what it measured.
private func captureToneInFrames(
    of microseconds: Int32, pipeWireQuantum: Int32 = 0, environment: [String: String] = [:],
    whileCapturing: () -> Void = {}, sourceLocation: SourceLocation = #_sourceLocation
) throws -> (frequency: Double, level: Double, frames: Int, quietest: Double, loudest: Double) {
    #expect(deskaudio_set_frame_duration(microseconds) == deskaudio_status.DESKAUDIO_OK.rawValue)
    #expect(deskaudio_set_pipewire_quantum(pipeWireQuantum) == deskaudio_status.DESKAUDIO_OK.rawValue)
    // At 2.5 ms, 128 kbit/s leaves CELT 40 bytes per frame, and libopus alone then holds a
    // pure tone's level off by up to 1.7 dB for seconds (coarse band energies; 20 of 26 tone
    // onsets fed to the encoder directly had such 10 ms blocks); at 192 kbit/s (60 bytes)
    // none did. What this test checks is the framing on a real server, so it gives libopus
    // those 60 bytes.
    let bitrate: Int32 = microseconds == 2_500 ? 192_000 : 128_000
    #expect(deskaudio_set_bitrate(bitrate) == deskaudio_status.DESKAUDIO_OK.rawValue)
    defer {
        _ = deskaudio_set_frame_duration(10_000)
        _ = deskaudio_set_bitrate(128_000)
        _ = deskaudio_set_pipewire_quantum(0)
    }
    // Runs of zeros inside the tone that the tap did not hear: the traces say whether the
    // server handed them (R-PW-ZERO-CYCLE: two 128-sample cycles in the clean-clone run of d432d0f).
    let traces = try CaptureTraces()
    defer { traces.stop() }
    let (collector, tap) = try MonitorTap.recording(environment: environment) {
        try capture(mic: false, app: true) {
            whileCapturing()
            try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 2, environment: environment)
                .waitUntilExit()
        }
    }
    var stats = deskaudio_stats()
    _ = deskaudio_get_stats(&stats, MemoryLayout<deskaudio_stats>.size)
    let frames = try collector.parsed()
    let samples = Int(microseconds) * 48 / 1000
    #expect(
        frames.allSatisfy { Int($0.header.frameSamples) == samples },
        "every frame holds \(samples) samples", sourceLocation: sourceLocation)
    expectContinuous(frames, sourceLocation: sourceLocation)
    let tone = ToneCheck(try collector.decoded())
    // 2 s of tone, and as many 10 ms blocks more as the server made gaps in it (silence the
    // library filled in for cycles it skipped, cycles of zeros it handed the capture alone).
    #expect(
        toneBlocks(played: 200, gapFrames: collector.serverSkips).contains(tone.loudFrames.count),
        "2 s of tone: \(tone.loudFrames.count) loud 10 ms blocks, the server's gaps \(collector.serverSkips)",
        sourceLocation: sourceLocation)
    // With the server's quantum at 5 ms (what 2.5 and 5 ms frames ask for), this 2-core
    // machine without real-time scheduling now and then lets the player miss a period: the
    // sink itself then carries 5 ms of silence, and every recorder of its monitor hears it.
    // So ours may have as many gaps as the tap heard on the same monitor at the same time, no
    // more, and the library must have lost nothing (ring, lateness, silence fill).
    #expect(
        stats.frames_dropped_overflow == 0 && stats.frames_dropped_late == 0 && stats.frames_silence_filled == 0,
        Comment(rawValue:
            "stats: \(stats.frames_dropped_overflow) frames' worth dropped by the ring, "
            + "\(stats.frames_dropped_late) late, \(stats.frames_silence_filled) silence-filled"),
        sourceLocation: sourceLocation)
    let high = tone.dropouts(expected: halfScaleSineLevel, tolerance: 1).filter { tone.frameLevels[$0] > halfScaleSineLevel }
    #expect(high.isEmpty, "10 ms blocks above the tone level: \(tone.describe(high))", sourceLocation: sourceLocation)
    let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
        tone, tap: tap, serverSkips: collector.serverSkips,
        sinkSilence: sinkSilenceBlocks(in: tone, playedSeconds: 2, frames: frames.map(\.header)), sourceLocation: sourceLocation)
    if !tone.gaps(below: halfScaleSineLevel).isEmpty {
        print("measured: zeros inside the tone in the capture's trace: \(traces.zeroRunsInsideTheSound())")
    }
    let extremes = tone.loudFrames.dropFirst(2).dropLast(2).map { tone.frameLevels[$0] }
    return (frequency, level, frames.count, extremes.min() ?? -.infinity, extremes.max() ?? -.infinity)
}

extension RealServerTests {
    /// Frames of 2.5, 5 and 20 ms, chosen through the C API, on both backends; a change of
    /// length while capturing.
    @Suite struct FrameDurationTests {
        @Test(arguments: [Int32(2_500), 5_000, 20_000])
        func aToneComesBackUnbrokenInFramesOfEachLength(microseconds: Int32) throws {
            let (frequency, level, frames, quietest, loudest) = try captureToneInFrames(of: microseconds)
            print(
                "measured: PipeWire, \(Double(microseconds) / 1000) ms frames: 1 kHz at \(frequency) Hz, "
                    + "\(level) dBFS (10 ms blocks \(quietest) to \(loudest)), \(frames) frames in sequence")
        }

        @Test(arguments: [Int32(2_500), 5_000])
        func shortFramesOnPlainPulseAudio(microseconds: Int32) throws {
            try withPlainPulseAudio { environment in
                let (frequency, level, frames, quietest, loudest) = try captureToneInFrames(
                    of: microseconds, environment: environment)
                print(
                    "measured: plain PulseAudio, \(Double(microseconds) / 1000) ms frames: 1 kHz at \(frequency) Hz, "
                        + "\(level) dBFS (10 ms blocks \(quietest) to \(loudest)), \(frames) frames in sequence")
            }
        }

        /// 10 ms frames from a PipeWire graph asked for a 64-sample quantum
        /// (deskaudio_set_pipewire_quantum(), for the least latency): the capture node asks for
        /// it, as the server shows, and the tone comes back unbroken.
        @Test func aToneComesBackUnbrokenFromA64SampleQuantum() throws {
            let (frequency, level, frames, quietest, loudest) = try captureToneInFrames(
                of: 10_000, pipeWireQuantum: 64,
                whileCapturing: {
                    let asked = waitUntil(seconds: 3) {
                        (try? ExternalTools.run(["pw-dump"]).output)?.contains("\"node.latency\": \"64/48000\"") == true
                    }
                    #expect(asked, "the capture node asks for a 64-sample quantum (pw-dump)")
                })
            print(
                "measured: PipeWire, 64-sample quantum: 1 kHz at \(frequency) Hz, \(level) dBFS "
                    + "(10 ms blocks \(quietest) to \(loudest)), \(frames) frames in sequence")
        }

        @Test func pipeWireQuantaOutsideTheRangeAreRefused() {
            for samples: Int32 in [-1, 1, 31, 481, 960] {
                #expect(deskaudio_set_pipewire_quantum(samples) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
                #expect(String(cString: deskaudio_last_error()!).contains("is not 0 or 32 to 480"), "\(samples)")
            }
            for samples: Int32 in [32, 480, 0] {
                #expect(deskaudio_set_pipewire_quantum(samples) == deskaudio_status.DESKAUDIO_OK.rawValue, "\(samples)")
            }
            #expect(
                deskaudio_capture_set_pipewire_quantum(nil, 64) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        }

        @Test func lengthsOtherThanTheFourAreRefused() {
            for microseconds: Int32 in [0, -1, 2_000, 7_500, 40_000, 60_000] {
                #expect(
                    deskaudio_set_frame_duration(microseconds) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
                #expect(String(cString: deskaudio_last_error()!).contains("2500, 5000, 10000 or 20000"))
            }
        }

        /// 10 ms, then 5 ms, then 20 ms while a tone plays: each change takes effect at a
        /// frame boundary, the sequence and the sample clock run on, the tone has no break.
        @Test func theLengthChangesWhileCapturingAtAFrameBoundary() throws {
            defer { _ = deskaudio_set_frame_duration(10_000) }
            // A gap the tap did not hear: the traces say whether the server handed zeros.
            let traces = try CaptureTraces()
            defer { traces.stop() }
            let before = StatsThroughCABITests.stats()
            let (collector, tap) = try MonitorTap.recording {
                try capture(mic: false, app: true) {
                    let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 2.4)
                    Thread.sleep(forTimeInterval: 0.8)
                    #expect(deskaudio_set_frame_duration(5_000) == deskaudio_status.DESKAUDIO_OK.rawValue)
                    Thread.sleep(forTimeInterval: 0.7)
                    #expect(deskaudio_set_frame_duration(20_000) == deskaudio_status.DESKAUDIO_OK.rawValue)
                    player.waitUntilExit()
                }
            }
            let frames = try collector.parsed()
            expectContinuous(frames)
            // The lengths in order of appearance: 480, then 240, then 960, each one run; with
            // the clock continuous, each change fell on a frame boundary (no frame was cut short).
            var runs: [UInt16] = []
            for frame in frames where runs.last != frame.header.frameSamples { runs.append(frame.header.frameSamples) }
            #expect(runs == [480, 240, 960], "frame lengths in order: \(runs)")
            let tone = ToneCheck(try collector.decoded())
            // libopus dips for a few ms where CELT's frame length changes (FramePipelineTests):
            // at most the 10 ms block of each change and the one after it. The sink's silence is
            // the tap's gaps or the tone's length, whichever says more (R-TAP-STARVED).
            let sinkSilence = sinkSilenceBlocks(in: tone, playedSeconds: 2.4, frames: frames.map(\.header))
            let (frequency, level) = expectUnbrokenHalfScale1kHzTone(
                tone, tap: tap, codecGaps: 2, serverSkips: collector.serverSkips, sinkSilence: sinkSilence)
            let dropouts = tone.dropouts(expected: halfScaleSineLevel, tolerance: 1)
            let upstream = max(
                tap.gaps(below: halfScaleSineLevel).joined().count,
                lengthCredit(sinkSilence: sinkSilence, serverSkips: collector.serverSkips))
            #expect(dropouts.count <= 4 + upstream + Int(collector.serverSkips), "10 ms blocks off the tone level: \(tone.describe(dropouts))")
            if dropouts.count > 4 {
                let stats = StatsThroughCABITests.stats()
                print("measured: zeros inside the tone in the capture's trace: \(traces.zeroRunsInsideTheSound()); "
                    + "the library dropped \(stats.frames_dropped_overflow - before.frames_dropped_overflow) frames' worth "
                    + "at the ring, \(stats.frames_dropped_late - before.frames_dropped_late) late")
            }
            let counts = runs.map { length in frames.filter { $0.header.frameSamples == length }.count }
            print(
                "measured: 10 → 5 → 20 ms while capturing: frames \(counts), the tone \(tone.loudSpan) blocks long "
                    + "(\(sinkSilence) more than played), 1 kHz at \(frequency) Hz, \(level) dBFS, "
                    + "no break in sequence or sample clock; blocks off by more than 1 dB: \(tone.describe(dropouts))")
        }
    }
}
