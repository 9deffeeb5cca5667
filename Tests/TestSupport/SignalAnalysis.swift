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
        var crossings: [Double] = []
        for index in 1..<samples.count where samples[index - 1] < 0 && samples[index] >= 0 {
            let fraction = Double(-samples[index - 1]) / Double(samples[index] - samples[index - 1])
            crossings.append(Double(index - 1) + fraction)
        }
        guard crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * 48_000 / (crossings.last! - crossings.first!)
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
    /// trimmed at each end), so tones that start at different times are each measured whole.
    public static func toneLevelWherePresent(_ samples: [Float], frequency: Double) -> Double {
        let channel = left(samples[...])
        let block = 960
        let present = stride(from: 0, to: channel.count - block + 1, by: block).filter {
            toneLevelDecibels(Array(channel[$0..<$0 + block]), frequency: frequency) > -40
        }
        guard let first = present.first, let last = present.last, last - first > 6 * block else {
            return -200
        }
        return toneLevelDecibels(
            Array(channel[(first + 3 * block)..<(last - 2 * block)]), frequency: frequency)
    }
}
