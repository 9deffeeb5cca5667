import Foundation

/// Measures decoded audio: level and dominant frequency of one channel.
public enum SignalAnalysis {
    /// A stereo sine, interleaved, both channels equal.
    public static func sine(frequency: Double, amplitude: Float, frames: Int, startFrame: Int = 0) -> [Float]
    {
        var samples: [Float] = []
        samples.reserveCapacity(frames * 2)
        for index in startFrame..<(startFrame + frames) {
            let value = amplitude * Float(sin(2 * Double.pi * frequency * Double(index) / 48_000))
            samples.append(value)
            samples.append(value)
        }
        return samples
    }

    /// Left channel of interleaved stereo.
    public static func left(_ interleaved: ArraySlice<Float>) -> [Float] {
        stride(from: interleaved.startIndex, to: interleaved.endIndex - 1, by: 2).map { interleaved[$0] }
    }

    /// RMS level in dBFS.
    public static func rmsDecibels(_ samples: [Float]) -> Double {
        let meanSquare = samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))
        return 10 * log10(max(meanSquare, 1e-20))
    }

    /// Frequency from rising zero crossings, interpolated between samples.
    public static func dominantFrequency(_ samples: [Float]) -> Double {
        let crossings = risingCrossings(samples[...])
        guard crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * 48_000 / (crossings.last! - crossings.first!)
    }

    /// The tone's pitch: the median of the frequencies of its 20 ms windows (each from rising
    /// zero crossings). A gap inside the tone (where decoded low-level noise crosses zero at
    /// random) spoils a window or two, not the pitch; gaps are a check of their own.
    public static func pitch(_ samples: [Float]) -> Double {
        let window = 960
        var estimates: [Double] = []
        var start = 0
        while start + window <= samples.count {
            let crossings = risingCrossings(samples[start..<(start + window)])
            if crossings.count > 2 {
                estimates.append(Double(crossings.count - 1) * 48_000 / (crossings.last! - crossings.first!))
            }
            start += window
        }
        guard !estimates.isEmpty else { return dominantFrequency(samples) }
        return estimates.sorted()[estimates.count / 2]
    }

    private static func risingCrossings(_ samples: ArraySlice<Float>) -> [Double] {
        var crossings: [Double] = []
        for index in (samples.startIndex + 1)..<max(samples.endIndex, samples.startIndex + 1)
        where samples[index - 1] < 0 && samples[index] >= 0 {
            let fraction = Double(-samples[index - 1]) / Double(samples[index] - samples[index - 1])
            crossings.append(Double(index - 1) + fraction)
        }
        return crossings
    }

    /// RMS level (dBFS) of the component at `frequency` (Goertzel filter over all samples).
    public static func toneLevelDecibels(_ samples: [Float], frequency: Double) -> Double {
        let omega = 2 * Double.pi * frequency / 48_000
        let coefficient = 2 * cos(omega)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power =
            previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        let amplitude = 2 * power.squareRoot() / Double(max(samples.count, 1))
        return 20 * log10(max(amplitude / 2.0.squareRoot(), 1e-12))
    }

    /// Level (dBFS) of the tone at `frequency` in interleaved stereo `samples`, measured over
    /// the stretch where that tone is present (20 ms blocks above −40 dBFS, three blocks
    /// trimmed at each end), so tones that start at different times are each measured whole:
    /// the median of the 20 ms blocks there that hold it (`toneInItsBlocks`), so gaps a loaded
    /// server makes lower only their own blocks (R-MIX-GAPS).
    public static func toneLevelWherePresent(_ samples: [Float], frequency: Double) -> Double {
        toneInItsBlocks(samples, frequency: frequency).level
    }

    /// RMS level (dBFS) of the component at `frequency` in one channel's `samples`: the median
    /// over blocks of `block` samples (100 ms), each Hann-windowed (another tone does not leak
    /// in) and measured on its own (a glitch or a gap lowers a block or two, not the whole
    /// measure through phase). A phase jump inside a block lowers that block too: where a
    /// jitter buffer drops or inserts frames evenly, blocks of 20 ms (960) keep the median
    /// on the tone's level (R-JB-PHASE).
    public static func medianBlockLevel(_ samples: ArraySlice<Float>, frequency: Double, block: Int = 4800) -> Double {
        let levels = blockLevels(samples, frequency: frequency, block: block)
        guard !levels.isEmpty else { return -200 }
        return levels.sorted()[levels.count / 2]
    }

    /// The level (dBFS) of the component at `frequency` in each whole block of `block`
    /// samples of one channel's `samples`, each block Hann-windowed.
    public static func blockLevels(_ samples: ArraySlice<Float>, frequency: Double, block: Int) -> [Double] {
        let window = (0..<block).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(block - 1))) }
        return stride(from: samples.startIndex, through: samples.endIndex - block, by: block).map { start in
            let weighted = zip(samples[start..<start + block], window).map { $0 * $1 }
            // The Hann window halves a sine's amplitude: +6.02 dB gives the tone's own level.
            return toneLevelDecibels(weighted, frequency: frequency) + 20 * log10(2.0)
        }
    }

    /// The tone at `frequency` in interleaved stereo `samples` where it sounds: the median
    /// level (dBFS) of the 20 ms blocks of its steady stretch that hold it (above −40 dBFS),
    /// and how many of that stretch's `blocks` are more than 3 dB below it (`lowBlocks`: gaps
    /// in the tone). A wrong level lowers every block; a gap the server made, only its own
    /// (R-MIX-GAPS). Level −200 where the tone never steadily sounds.
    public static func toneInItsBlocks(_ samples: [Float], frequency: Double) -> (
        level: Double, lowBlocks: Int, blocks: Int
    ) {
        guard let stretch = steadyStretch(samples, frequency: frequency) else { return (-200, 0, 0) }
        let levels = blockLevels(left(samples[...])[stretch], frequency: frequency, block: 960)
        let present = levels.filter { $0 > presentDecibels }.sorted()
        guard !present.isEmpty else { return (-200, levels.count, levels.count) }
        let level = present[present.count / 2]
        return (level, levels.filter { $0 < level - 3 }.count, levels.count)
    }

    /// The level (dBFS) above which a 20 ms block holds a tone.
    static let presentDecibels = -40.0

    /// The samples of the left channel of interleaved stereo `samples` over which the tone
    /// at `frequency` is steadily present (as toneLevelWherePresent finds it), nil if it never
    /// is: the window in which to measure what else is there, away from its onset and end.
    public static func steadyStretch(_ samples: [Float], frequency: Double) -> Range<Int>? {
        let channel = left(samples[...])
        let block = 960
        let present = stride(from: 0, to: channel.count - block + 1, by: block).filter {
            toneLevelDecibels(Array(channel[$0..<$0 + block]), frequency: frequency) > presentDecibels
        }
        guard let first = present.first, let last = present.last, last - first > 6 * block else { return nil }
        return (first + 3 * block)..<(last - 2 * block)
    }
}
