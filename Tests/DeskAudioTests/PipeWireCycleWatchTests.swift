import Testing

@testable import DeskAudio

@Suite struct PipeWireCycleWatchTests {
    /// Cycles of 480 ticks at 1/48000 s, 10 ms apart: the first tells nothing.
    @Test func cyclesInStepSkipNothing() {
        var watch = PipeWireCycleWatch()
        for cycle in 0..<10 {
            let skipped = watch.skippedSamples(
                ticks: UInt64(1_000 + 480 * cycle), durationTicks: 480, rate: (1, 48_000),
                nowNs: Int64(5_000_000_000 + 10_000_000 * cycle))
            #expect(skipped == 0)
        }
    }

    /// Three cycles gone by between two buffers, and the cycles' times agree: 1440 samples.
    @Test func cyclesTheStreamMissedAreCounted() {
        var watch = PipeWireCycleWatch()
        #expect(watch.skippedSamples(ticks: 0, durationTicks: 480, rate: (1, 48_000), nowNs: 1_000_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 480 * 4, durationTicks: 480, rate: (1, 48_000), nowNs: 1_040_000_000) == 1440)
        #expect(watch.skippedSamples(ticks: 480 * 5, durationTicks: 480, rate: (1, 48_000), nowNs: 1_050_000_000) == 0)
    }

    /// A graph at 44.1 kHz: ticks in 1/44100 s, converted; two missed cycles of 441 are 960.
    @Test func aGraphAtAnotherRateIsConverted() {
        var watch = PipeWireCycleWatch()
        var ticks: UInt64 = 0
        var now: Int64 = 2_000_000_000
        for _ in 0..<20 {
            #expect(watch.skippedSamples(ticks: ticks, durationTicks: 441, rate: (1, 44_100), nowNs: now) == 0)
            ticks += 441
            now += 10_000_000
        }
        ticks += 882
        now += 20_000_000
        #expect(watch.skippedSamples(ticks: ticks, durationTicks: 441, rate: (1, 44_100), nowNs: now) == 960)
    }

    /// A jump of the clock the cycles' times do not bear out (another driver, or a clock that
    /// started again), or one backwards, is not a skip.
    @Test func jumpsTheCycleTimesDoNotBearOutAreNoSkip() {
        var watch = PipeWireCycleWatch()
        #expect(watch.skippedSamples(ticks: 480, durationTicks: 480, rate: (1, 48_000), nowNs: 1_000_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 9_000_000, durationTicks: 480, rate: (1, 48_000), nowNs: 1_010_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 100, durationTicks: 480, rate: (1, 48_000), nowNs: 1_020_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 580, durationTicks: 480, rate: (1, 48_000), nowNs: 1_030_000_000) == 0)
    }

    /// The quantum changing: each cycle starts where the last one's duration ended, whatever
    /// the buffers' lengths: no skip (by buffer lengths, a doubling read as one).
    @Test func aQuantumChangeIsNoSkip() {
        var watch = PipeWireCycleWatch()
        #expect(watch.skippedSamples(ticks: 0, durationTicks: 256, rate: (1, 48_000), nowNs: 1_000_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 256, durationTicks: 512, rate: (1, 48_000), nowNs: 1_005_333_333) == 0)
        #expect(watch.skippedSamples(ticks: 768, durationTicks: 240, rate: (1, 48_000), nowNs: 1_016_000_000) == 0)
        #expect(watch.skippedSamples(ticks: 1008, durationTicks: 240, rate: (1, 48_000), nowNs: 1_021_000_000) == 0)
    }
}
