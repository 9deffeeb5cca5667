@testable import DeskAudio
import TestSupport
import Testing

@Suite struct LevelMeterTests {
    @Test func aSineReadsItsPeakAndRMSOnceABlockIsComplete() {
        let meter = LevelMeter()
        let tone = SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 48_000)
        tone.withUnsafeBufferPointer { meter.measure(UnsafeBufferPointer(rebasing: $0[0..<9000])) }
        #expect(meter.peak == 0, "nothing before the first 100 ms block is complete")
        tone.withUnsafeBufferPointer { meter.measure(UnsafeBufferPointer(rebasing: $0[9000...])) }
        #expect(abs(LevelMeter.dBFS(meter.peak) - -6.02) < 0.01)
        #expect(abs(LevelMeter.dBFS(meter.rms) - -9.03) < 0.01)
    }

    @Test func bufferSizesDoNotChangeTheLevels() {
        // A second of a tone with one loud negative sample, measured whole and in odd-sized,
        // unaligned pieces (as servers hand them over): the same peak and RMS.
        var tone = SignalAnalysis.sine(frequency: 997, amplitude: 0.25, frames: 48_000)
        tone[12_345] = -0.75
        let whole = LevelMeter()
        tone.withUnsafeBufferPointer { whole.measure($0) }
        let pieces = LevelMeter()
        tone.withUnsafeBufferPointer { samples in
            let sizes = [1, 7, 9, 250, 3, 1023, 8, 9599, 9601, 17]
            var start = 0
            var piece = 0
            while start < samples.count {
                let end = min(start + sizes[piece % sizes.count], samples.count)
                pieces.measure(UnsafeBufferPointer(rebasing: samples[start..<end]))
                start = end
                piece += 1
            }
        }
        #expect(whole.peak == 0.75 && pieces.peak == 0.75)
        #expect(abs(LevelMeter.dBFS(whole.rms) - -15.05) < 0.01)
        #expect(abs(pieces.rms - whole.rms) < 1e-6)
    }

    @Test func theWindowIsTheLastSecond() {
        let meter = LevelMeter()
        SignalAnalysis.sine(frequency: 1000, amplitude: 0.5, frames: 48_000).withUnsafeBufferPointer {
            meter.measure($0)
        }
        // Half a second of silence: the tone still fills half the window.
        let silence = [Float](repeating: 0, count: 48_000)
        silence.withUnsafeBufferPointer { meter.measure($0) }
        #expect(abs(LevelMeter.dBFS(meter.peak) - -6.02) < 0.01)
        #expect(abs(LevelMeter.dBFS(meter.rms) - (-9.03 - 3.01)) < 0.01)
        // A full second of silence: the tone is gone.
        silence.withUnsafeBufferPointer { meter.measure($0) }
        #expect(meter.peak == 0)
        #expect(LevelMeter.dBFS(meter.rms) == -120)
    }

    @Test func resetForgetsEverything() {
        let meter = LevelMeter()
        SignalAnalysis.sine(frequency: 440, amplitude: 0.9, frames: 48_000).withUnsafeBufferPointer {
            meter.measure($0)
        }
        meter.reset()
        #expect(meter.peak == 0 && meter.rms == 0)
    }

    @Test func latencyWindowReportsMeanAndMaximumEveryHundredFrames() {
        var window = LatencyWindow()
        for frame in 1..<100 { #expect(window.add(UInt64(frame) * 1000) == nil) }
        let result = window.add(100_000)
        #expect(result?.meanNs == 50_500 && result?.maxNs == 100_000)
        #expect(window.add(7) == nil, "a new window starts")
    }
}
