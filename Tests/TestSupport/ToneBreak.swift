import Foundation

/// A place where a steady sine breaks, found in 1 ms windows: a run of windows whose
/// amplitude falls under half the tone's, or a jump of its phase. `shiftSamples` is how far
/// the tone after the break lies behind the tone before it, modulo one period (in
/// −period/2 ..< period/2), which tells, with the break's length, what happened to the audio:
/// about 0 — the quiet run stood in for audio whose time went on (lost, time kept: a skip
/// filled with silence); about the length of the silence (one 64-sample quantum: +16 for a
/// 1 kHz tone) — the tone paused for it and went on where it stopped (nothing lost, silence
/// put in: a player or graph cycle that came late); negative with no quiet run — audio
/// missing with nothing in its place.
public struct ToneBreak: CustomStringConvertible, Sendable {
    /// Where the break starts, in samples of the signal analysed.
    public let startSample: Int
    /// How long the quiet run lasts, in samples (whole 1 ms windows; 0 for a phase jump).
    public let lengthSamples: Int
    /// The tone after the break against the tone before it, in samples modulo one period.
    public let shiftSamples: Double

    public var description: String {
        let at = String(format: "%.3f s", Double(startSample) / 48_000)
        let run = lengthSamples == 0 ? "no quiet run" : "quiet \(lengthSamples / 48) ms"
        return "\(at): \(run), tone after it \(String(format: "%+.0f", shiftSamples)) samples"
    }

    /// The breaks in `samples` (one channel at 48 kHz) of a tone of `frequency`, whose
    /// amplitude is the median window's; at most `limit` of them.
    public static func find(in samples: [Float], frequency: Double, limit: Int = 12) -> [ToneBreak] {
        let window = 48
        let count = samples.count / window
        guard count > 8 else { return [] }
        let period = 48_000 / frequency
        var amplitudes: [Double] = []
        var phases: [Double] = []  // in samples, 0 ..< period
        for index in 0..<count {
            var inPhase = 0.0
            var quadrature = 0.0
            var power = 0.0
            for offset in 0..<window {
                let sampleIndex = index * window + offset
                let value = Double(samples[sampleIndex])
                let angle = 2 * Double.pi * Double(sampleIndex) / period
                inPhase += value * cos(angle)
                quadrature += value * sin(angle)
                power += value * value
            }
            amplitudes.append((2 * power / Double(window)).squareRoot())
            let phase = atan2(quadrature, inPhase) / (2 * Double.pi) * period
            phases.append(phase < 0 ? phase + period : phase)
        }
        let typical = amplitudes.sorted()[count / 2]
        let quiet = amplitudes.map { $0 < typical / 2 }
        var breaks: [ToneBreak] = []
        var index = 1
        var lastGood = quiet[0] ? nil : Optional(0)
        while index < count, breaks.count < limit {
            if quiet[index] {
                let start = index
                while index < count, quiet[index] { index += 1 }
                guard index < count else { break }
                guard let before = lastGood else {
                    lastGood = index  // quiet from the start: the tone begins here
                    continue
                }
                let shift = signedDistance(phases[index], phases[before], modulo: period)
                breaks.append(
                    ToneBreak(
                        startSample: start * window, lengthSamples: (index - start) * window, shiftSamples: shift))
                lastGood = index
            } else if let before = lastGood, distance(phases[index], phases[before], modulo: period) > 4 {
                // A jump with no quiet run: the windows around it are judged against the
                // tone before it, so the two windows it spreads over count once.
                let shift = signedDistance(phases[min(index + 1, count - 1)], phases[before], modulo: period)
                breaks.append(ToneBreak(startSample: index * window, lengthSamples: 0, shiftSamples: shift))
                index += 1
                lastGood = min(index, count - 1)
            } else {
                lastGood = index
            }
            index += 1
        }
        return breaks
    }

    /// `a` − `b` modulo `period`, in −period/2 ..< period/2.
    static func signedDistance(_ a: Double, _ b: Double, modulo period: Double) -> Double {
        var difference = (a - b).truncatingRemainder(dividingBy: period)
        if difference >= period / 2 { difference -= period }
        if difference < -period / 2 { difference += period }
        return difference
    }

    static func distance(_ a: Double, _ b: Double, modulo period: Double) -> Double {
        abs(signedDistance(a, b, modulo: period))
    }
}
