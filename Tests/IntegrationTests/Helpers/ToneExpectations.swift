import DeskAudio
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

/// A figure of real-time behaviour (gaps in a tone, a delay, time steps of a real server's
/// clock): written to the measurement report (`MeasurementReport`) and judged only against
/// its gross `budget`, stated beside it at the call; under a sanitizer, which slows every
/// thread of the process 2–15 times, recorded and not judged.
func expectWithinBudget(
    _ figure: String, _ value: Double, unit: String, _ budget: MeasurementReport.Budget,
    _ comment: @autoclosure () -> String = "", test: String = #function, sourceLocation: SourceLocation = #_sourceLocation
) {
    let within = MeasurementReport.record(
        figure, value, unit: unit, budget: budget, test: "\(sourceLocation.fileName):\(test)", judged: sanitizer == nil)
    #expect(within, "\(figure): \(value) \(unit), past its gross budget \(budget). \(comment())", sourceLocation: sourceLocation)
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
    let stats = RealServerTests.StatsThroughCABITests.stats()
    return (stats.frames_skipped_by_server, stats.server_zero_cycles)
}

/// What the mix of app and microphone has so far filled with silence for a lagging source
/// and dropped of its late audio, in frames (deskaudio_stats).
func mixerGaps() -> (silenceFilled: UInt64, droppedLate: UInt64) {
    let stats = RealServerTests.StatsThroughCABITests.stats()
    return (stats.frames_silence_filled, stats.frames_dropped_late)
}

/// The loud 10 ms blocks a tone played for `played` blocks may come out as: 5 either way at
/// its ends, and longer by as many blocks as the server's counted gaps hold (`gapFrames`
/// frames' worth of `frameMilliseconds` each): when the whole graph runs late, the player
/// misses the cycles the capture misses, the sink's own timeline carries silence there, and
/// the silence the library counts and fills keeps that timeline (R-PW-GRAPH-LATE).
func toneBlocks(played: Int, gapFrames: UInt64, frameMilliseconds: Double = 10) -> ClosedRange<Int> {
    (played - 5)...(played + 5 + Int((Double(gapFrames) * frameMilliseconds / 10).rounded(.up)))
}

/// The 10 ms blocks of silence the sink's own timeline held inside a tone played for
/// `playedSeconds`, as the tone's length in `frames` shows (`ToneCheck.blocksLonger`): a
/// player that misses periods plays the rest of its tone later, and a tap starved at the same
/// time may not hear it (R-TAP-STARVED); a server that hands one consumer zeros, or a library
/// that loses audio, leaves the length as it was. That holds only where the library added no
/// samples of its own, which would put the frames' capture times behind their sample clock:
/// where the two part by more than 2 ms end to end, none (its gaps are then judged as ours).
func sinkSilenceBlocks(in tone: ToneCheck, playedSeconds: Double, frames: [AudioFrameHeader]) -> Int {
    guard let first = frames.first, let last = frames.last else { return 0 }
    return abs(captureTimeAgainstSampleClockMs(from: first, to: last)) <= 2 ? tone.blocksLonger(thanPlayed: playedSeconds) : 0
}

/// How far the capture times moved from frame `a` to frame `b` beyond what their sample
/// clocks moved (48 kHz), ms.
func captureTimeAgainstSampleClockMs(from a: AudioFrameHeader, to b: AudioFrameHeader) -> Double {
    let bySamples = Double(b.sampleClock - a.sampleClock) * 1e3 / 48_000
    let byTime = (Double(b.captureTimeNs) - Double(a.captureTimeNs)) / 1e6
    return byTime - bySamples
}

/// The blocks of a tone's gaps that its length credits to the sink (`sinkSilence`, from
/// `sinkSilenceBlocks`) and a block either side; less the server's skips, whose filled
/// silence lengthens the tone too and is credited as theirs (R-PW-GRAPH-LATE); 0 when none.
func lengthCredit(sinkSilence: Int, serverSkips: UInt64) -> Int {
    let lengthened = max(sinkSilence - Int(serverSkips), 0)
    return lengthened > 0 ? lengthened + 2 : 0
}

/// Expects `tone` to be a 1 kHz tone of amplitude 0.5: its pitch within 2 % and its level
/// (the median 10 ms block) within 1 dB, which a loaded machine cannot bend. (Where the server
/// broke the stream (`serverSkips`), the pitch is the spectrum's peak, `spectralPeak`, which
/// many short breaks do not move: at a 64-sample quantum under load PipeWire 1.4 handed a
/// capture 129 frames' worth of skips and 45 cycles of zeros in 2.8 s, and the zero crossings
/// of the broken 20 ms windows read 1373 Hz.) Its gaps (runs of
/// 10 ms blocks more than 1 dB low) it can: the blocks in gaps, beyond the `codecGaps` the test
/// knows the codec makes, the audio the server skipped and the library counted (`serverSkips`,
/// as silence in its place) and the gaps `tap`, an independent recorder of the same monitor at
/// the same time, heard at the same place (the sink itself carries the rig player's misses:
/// ../shared/README.md, R-RIG-PLAYER) or the sink's timeline shows (`sinkSilence` blocks from
/// `sinkSilenceBlocks`, less the server's: up to that many and a block either side, the tap's
/// gaps or these, whichever credits more), are a measured figure, with a gross budget of 5 %
/// of the tone's blocks.
/// Returns the pitch and the level.
@discardableResult
func expectUnbrokenHalfScale1kHzTone(
    _ tone: ToneCheck, tap: ToneCheck? = nil, codecGaps: Int = 0, serverSkips: UInt64 = 0, sinkSilence: Int = 0,
    test: String = #function, sourceLocation: SourceLocation = #_sourceLocation
) -> (frequency: Double, level: Double) {
    #expect(!tone.loudFrames.isEmpty, "no tone", sourceLocation: sourceLocation)
    let ours = tone.gaps(below: halfScaleSineLevel)
    let blocks = max(tone.interior.count / 480, 1)
    let upstream = tap?.gaps(below: halfScaleSineLevel) ?? []
    let heardByTap = tap.map { tone.blocks(in: ours, alsoIn: upstream, of: $0) } ?? 0
    let oursBlocks = ours.reduce(0) { $0 + $1.count }
    let onTheSink = max(heardByTap, min(lengthCredit(sinkSilence: sinkSilence, serverSkips: serverSkips), oursBlocks))
    let broken = max(oursBlocks - onTheSink - codecGaps - Int(serverSkips), 0)
    let describe = { (check: ToneCheck, runs: [[Int]]) in runs.map { "[\(check.describe($0))]" }.joined(separator: " ") }
    expectWithinBudget(
        "tone blocks in gaps", Double(broken) / Double(blocks) * 100, unit: "%", .atMost(5),
        "gaps in ours: \(describe(tone, ours)); the tap's: \(tap.map { describe($0, upstream) } ?? "no tap") "
            + "(\(heardByTap) blocks of ours where the tap had its own); the sink's timeline \(sinkSilence) blocks longer "
            + "than played; frames' worth the server skipped: \(serverSkips)",
        test: test, sourceLocation: sourceLocation)
    if broken > 0 {
        dumpForDiagnosis(tone.interior, named: "ours", sourceLocation: sourceLocation)
        if let tap { dumpForDiagnosis(tap.interior, named: "tap", sourceLocation: sourceLocation) }
    }
    let frequency = SignalAnalysis.pitch(tone.interior)
    if Double(serverSkips) > 0.05 * Double(blocks) {
        MeasurementReport.record(
            "pitch error where the server broke the stream (\(serverSkips) gaps counted)", abs(frequency - 1000), unit: "Hz",
            budget: .atMost(20), test: "\(sourceLocation.fileName):\(test)", judged: false)
    } else {
        #expect(abs(frequency - 1000) <= 20, "frequency \(frequency) Hz", sourceLocation: sourceLocation)
    }
    let level = tone.medianLevel
    #expect(abs(level - halfScaleSineLevel) <= 1, "level \(level) dBFS", sourceLocation: sourceLocation)
    return (frequency, level)
}

/// Expects mic-only audio captured during playMicAndAppTones(): the mic's 440 Hz at its level
/// (the median 10 ms block, within 1 dB: what gaps and phase breaks cannot bend), the app
/// sink's 1 kHz absent (below −60 dBFS). Returns both levels.
@discardableResult
func expectMicAloneWithoutAppAudio(
    _ tone: ToneCheck, serverSkips: UInt64 = 0, sourceLocation: SourceLocation = #_sourceLocation
) -> (mic: Double, app: Double) {
    let mic = tone.medianLevel
    let app = SignalAnalysis.toneLevelDecibels(tone.interior, frequency: 1000)
    // What a low 440 Hz level was (seen once on Debian 13, 6.7 dB low with every frame loud):
    // a pitch error shows in the frequency, a dropout in the quietest frames, a level in all.
    let sorted = tone.loudFrames.map { tone.frameLevels[$0] }.sorted()
    let profile = sorted.isEmpty ? "no loud frames" : String(
        format: "%.2f Hz; frame RMS min %.1f, median %.1f, max %.1f dBFS", SignalAnalysis.pitch(tone.interior),
        sorted[0], sorted[sorted.count / 2], sorted[sorted.count - 1])
    // Within 1 dB in the plain suites; under a sanitizer, whose slowdown starves the rig's
    // real-time threads, recorded.
    expectWithinBudget(
        "the microphone's level off the played (median 10 ms block)", abs(mic - quietSineLevel), unit: "dB", .atMost(1),
        "440 Hz at \(mic) dBFS (\(profile))", sourceLocation: sourceLocation)
    #expect(app < -60, "1 kHz from the app sink leaked in at \(app) dBFS", sourceLocation: sourceLocation)
    return (mic, app)
}
