import Foundation
import TestSupport
import Testing

/// RMS of a sine of amplitude 0.5, in dBFS.
let halfScaleSineLevel = 20 * log10(0.5 / 2.0.squareRoot())

/// Expects `tone` to be one unbroken 1 kHz tone of amplitude 0.5: no quiet frame inside it,
/// frequency within 2 %, level within 1 dB. Returns what it measured.
@discardableResult
func expectUnbrokenHalfScale1kHzTone(
    _ tone: ToneCheck, sourceLocation: SourceLocation = #_sourceLocation
) -> (frequency: Double, level: Double) {
    let contiguous = tone.isContiguous
    #expect(contiguous, "no dropout inside the tone", sourceLocation: sourceLocation)
    let frequency = SignalAnalysis.dominantFrequency(tone.interior)
    #expect(abs(frequency - 1000) <= 20, "frequency \(frequency) Hz", sourceLocation: sourceLocation)
    let level = SignalAnalysis.rmsDecibels(tone.interior)
    #expect(abs(level - halfScaleSineLevel) <= 1, "level \(level) dBFS", sourceLocation: sourceLocation)
    return (frequency, level)
}

/// Expects mic-only audio captured during playMicAndAppTones(): the mic's 440 Hz at its level
/// (within 1 dB), the app sink's 1 kHz absent (below −60 dBFS). Returns both levels.
@discardableResult
func expectMicAloneWithoutAppAudio(
    _ tone: ToneCheck, sourceLocation: SourceLocation = #_sourceLocation
) -> (mic: Double, app: Double) {
    let mic = SignalAnalysis.toneLevelDecibels(tone.interior, frequency: 440)
    let app = SignalAnalysis.toneLevelDecibels(tone.interior, frequency: 1000)
    #expect(abs(mic - quietSineLevel) <= 1, "440 Hz at \(mic) dBFS", sourceLocation: sourceLocation)
    #expect(app < -60, "1 kHz from the app sink leaked in at \(app) dBFS", sourceLocation: sourceLocation)
    return (mic, app)
}
