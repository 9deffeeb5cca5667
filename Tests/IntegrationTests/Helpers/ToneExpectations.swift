import DeskAudioC
import DeskAudioCTypes
import Foundation
import TestSupport
import Testing

/// RMS of a sine of amplitude 0.5, in dBFS.
let halfScaleSineLevel = 20 * log10(0.5 / 2.0.squareRoot())

/// The sanitizer the suite runs under (scripts/test-sanitized sets DESKAUDIO_TEST_SANITIZER), nil in
/// the plain suites.
let sanitizer = ProcessInfo.processInfo.environment["DESKAUDIO_TEST_SANITIZER"]

/// A check of real-time behaviour (no gap in the tone, a level that a late thread would
/// lower, a delay): judged in the plain suites, on both server stacks. Under a sanitizer,
/// which slows every thread of the process 2–15 times, the check measures the sanitizer, not
/// the library: there it is printed, not judged (a sanitizer report still fails the run).
func expectInRealTime(
    _ condition: Bool, _ comment: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
) {
    if let sanitizer {
        if !condition { print("not judged under \(sanitizer) (real time): \(comment())") }
    } else {
        #expect(condition, Comment(rawValue: comment()), sourceLocation: sourceLocation)
    }
}

/// Where DESKAUDIO_TEST_DUMP_DIR names a directory: writes `samples` there as raw 32-bit
/// floats (48 kHz mono), named after the test's file and line and `name`, for a look at a
/// failed real-time check sample by sample (where in a block the audio broke, and whether
/// it went on from where it stopped).
func dumpForDiagnosis(_ samples: [Float], named name: String, sourceLocation: SourceLocation) {
    guard let directory = ProcessInfo.processInfo.environment["DESKAUDIO_TEST_DUMP_DIR"] else { return }
    let file = "\(directory)/\(sourceLocation.fileName)-\(sourceLocation.line)-\(getpid())-\(name).f32"
    let data = samples.withUnsafeBufferPointer { Data(buffer: $0) }
    if FileManager.default.createFile(atPath: file, contents: data) { print("measured: wrote \(file)") }
}

/// The gaps the server made in the default capture's audio so far, each of which may be a
/// gap in a tone: its frames' worth skipped (deskaudio_stats.frames_skipped_by_server) and
/// the cycles of exact zeros it handed a stream alone inside the sound (server_zero_cycles:
/// PipeWire 0.3.65 gives one consumer of a monitor such a cycle now and then, which a tap of
/// the same monitor mostly does not get).
func serverSkips() -> UInt64 {
    let gaps = serverGaps()
    return gaps.skippedFrames + gaps.zeroCycles
}

/// The two kinds of `serverSkips()` apart, for messages.
func serverGaps() -> (skippedFrames: UInt64, zeroCycles: UInt64) {
    var stats = deskaudio_stats()
    _ = deskaudio_get_stats(&stats, MemoryLayout<deskaudio_stats>.size)
    return (stats.frames_skipped_by_server, stats.server_zero_cycles)
}

/// Expects `tone` to be one unbroken 1 kHz tone of amplitude 0.5: its pitch within 2 %, its
/// level (the median 10 ms block) within 1 dB, and no gap inside it (a run of blocks more than
/// 1 dB low) — unless `tap`, an independent recorder of the same monitor at the same time
/// (MonitorTap), heard at least as many gaps: then the sink itself carried them; or the
/// tap's tone broke within 30 ms of the gap without a gap of its own (a cycle lost or
/// repeated): a cycle of the monitor that the two got wrong each in its own way, ours with
/// zeros (docs/reliability.md, "Monitor consumers that get a cycle of zeros"). `codecGaps`
/// more are allowed where the test knows the codec dips (a change of frame length), and
/// `serverSkips` more (`serverSkips()` over the capture): audio the server moved past while
/// this process's threads were not run, which the library counts and fills with silence, at
/// least one per skip, and cycles of zeros the server handed our stream alone, which it
/// counts (docs/reliability.md). Returns the pitch and the level.
@discardableResult
func expectUnbrokenHalfScale1kHzTone(
    _ tone: ToneCheck, tap: ToneCheck? = nil, codecGaps: Int = 0, serverSkips: UInt64 = 0,
    sourceLocation: SourceLocation = #_sourceLocation
) -> (frequency: Double, level: Double) {
    #expect(!tone.loudFrames.isEmpty, "no tone", sourceLocation: sourceLocation)
    if let tap {
        // A tap that heard nothing would hear no gap either, and excuse none.
        #expect(!tap.loudFrames.isEmpty, "the tap heard no tone: it is not recording the sink", sourceLocation: sourceLocation)
    }
    let ours = tone.gaps(below: halfScaleSineLevel)
    let upstream = tap?.gaps(below: halfScaleSineLevel) ?? []
    let describe = { (check: ToneCheck, runs: [[Int]]) in runs.map { "[\(check.describe($0))]" }.joined(separator: " ") }
    let nearTapBreaks = tap.map { tone.gaps(ours, nearBreaksOf: $0, outside: upstream, frequency: 1000) } ?? 0
    let unexplainedGaps = ours.count - nearTapBreaks > upstream.count + codecGaps + Int(serverSkips)
    expectInRealTime(
        !unexplainedGaps,
        "gaps in the tone: \(describe(tone, ours)); the tap heard on the same monitor: \(tap.map { describe($0, upstream) } ?? "no tap"); "
            + "ours where the tap's tone broke without a gap: \(nearTapBreaks); frames' worth the server skipped: \(serverSkips)",
        sourceLocation: sourceLocation)
    if unexplainedGaps {
        dumpForDiagnosis(tone.interior, named: "ours", sourceLocation: sourceLocation)
        if let tap { dumpForDiagnosis(tap.interior, named: "tap", sourceLocation: sourceLocation) }
    }
    let frequency = SignalAnalysis.pitch(tone.interior)
    #expect(abs(frequency - 1000) <= 20, "frequency \(frequency) Hz", sourceLocation: sourceLocation)
    if !ours.isEmpty || !upstream.isEmpty || serverSkips > 0 || abs(frequency - 1000) > 20 {
        print(
            "measured: gaps in ours \(describe(tone, ours)); the tap's \(describe(tap ?? tone, upstream)); "
                + "ours where the tap's tone broke without a gap \(nearTapBreaks); server skips \(serverSkips)")
        // Where each signal broke, and whether the tone went on where it stopped (ToneBreak).
        let breaks = { (check: ToneCheck) in ToneBreak.find(in: check.interior, frequency: 1000).map(\.description) }
        print("measured: breaks in ours \(breaks(tone)); in the tap's \(tap.map(breaks) ?? [])")
    }
    let level = tone.medianLevel
    #expect(abs(level - halfScaleSineLevel) <= 1, "level \(level) dBFS", sourceLocation: sourceLocation)
    return (frequency, level)
}

/// Expects mic-only audio captured during playMicAndAppTones(): the mic's 440 Hz at its level
/// (within 1 dB), the app sink's 1 kHz absent (below −60 dBFS). Returns both levels. The level
/// is the tone's over the whole interior, which a break in its phase lowers; where the server
/// skipped audio (`serverSkips`, as in expectUnbrokenHalfScale1kHzTone) the library put silence
/// in its place, and the median 10 ms block's level is judged instead.
@discardableResult
func expectMicAloneWithoutAppAudio(
    _ tone: ToneCheck, serverSkips: UInt64 = 0, sourceLocation: SourceLocation = #_sourceLocation
) -> (mic: Double, app: Double) {
    let mic = serverSkips > 0 ? tone.medianLevel : SignalAnalysis.toneLevelDecibels(tone.interior, frequency: 440)
    let app = SignalAnalysis.toneLevelDecibels(tone.interior, frequency: 1000)
    // What a low 440 Hz level was (seen once on Debian 13, 6.7 dB low with every frame loud):
    // a pitch error shows in the frequency, a dropout in the quietest frames, a level in all.
    let sorted = tone.loudFrames.map { tone.frameLevels[$0] }.sorted()
    let profile = sorted.isEmpty ? "no loud frames" : String(
        format: "%.2f Hz; frame RMS min %.1f, median %.1f, max %.1f dBFS", SignalAnalysis.pitch(tone.interior),
        sorted[0], sorted[sorted.count / 2], sorted[sorted.count - 1])
    expectInRealTime(abs(mic - quietSineLevel) <= 1, "440 Hz at \(mic) dBFS (\(profile))", sourceLocation: sourceLocation)
    #expect(app < -60, "1 kHz from the app sink leaked in at \(app) dBFS", sourceLocation: sourceLocation)
    return (mic, app)
}
