@testable import DeskAudio
import Testing

/// `SkippedCycleWatch` on hand-made reports: a line of exactly 48 kHz through 0 at time 0,
/// reports every 480 samples unless a test says otherwise.
@Suite struct SkippedCycleWatchTests {
    static let part = SkippedCycleWatch.longestPartSamples
    static let nanosecondsPerSample = 1e9 / 48_000

    /// An estimator whose line runs through (0, 0) at 48 kHz, settled on steady reports.
    static func steadyEstimator() -> ClockEstimator {
        var estimator = ClockEstimator()
        var position: Int64 = 0
        while position <= 10 * 48_000 {
            estimator.report(position: position, timeNs: UInt64(1_000_000_000 + Double(position) * nanosecondsPerSample))
            position += 480
        }
        return estimator
    }

    /// Feeds reports from `from` up to `to` (positions) late by `lateNs` from `lateFrom` on;
    /// returns the first estimator the watch gave, and the position it gave it at.
    static func feed(
        _ watch: inout SkippedCycleWatch, _ estimator: ClockEstimator, from: Int64, to: Int64,
        lateNs: Double, lateFrom: Int64, earliestNs: Double = 0, every interval: Int64 = 480
    ) -> (ClockEstimator, Int64)? {
        var position = from
        while position < to {
            let late = position >= lateFrom ? lateNs : 0
            let time = UInt64(1_000_000_000 + Double(position) * nanosecondsPerSample + late)
            watch.note(position: position, timeNs: time, estimator: estimator)
            if let stepped = watch.skippedCycle(at: position, earliestNs: earliestNs) { return (stepped, position) }
            position += interval
        }
        return nil
    }

    @Test func reportsLateThroughoutTwoWholePartsAreASkip() throws {
        let estimator = Self.steadyEstimator()
        var watch = SkippedCycleWatch()
        let start = 11 * 48_000 - 11 * 48_000 % Self.part  // a part's first sample
        // 5.3 ms late from the middle of a part on: the mark before that part is judged at
        // the first report four parts after it, and moved by the 5.3 ms.
        let skipAt = start + 2 * Self.part + Self.part / 2
        let (stepped, at) = try #require(
            Self.feed(&watch, estimator, from: start, to: start + 10 * Self.part, lateNs: 5_333_333, lateFrom: skipAt))
        // (The first report in that part: reports come every 480 samples, parts are 6000.)
        #expect(at >= start + 5 * Self.part && at < start + 5 * Self.part + 480, "judged at \(at - start) samples in")
        let line = try #require(stepped.line)
        #expect(line.position == at)
        let expected = 1_000_000_000 + Double(at) * Self.nanosecondsPerSample + 5_333_333
        #expect(abs(line.timeNs(ofPosition: at) - expected) < 20_000, "off by \((line.timeNs(ofPosition: at) - expected) / 1e3) µs")
        #expect(stepped.relocks == estimator.relocks + 1)
    }

    @Test func oneReportOnTimeInTheWatchedPartsIsNoSkip() {
        let estimator = Self.steadyEstimator()
        let start = 11 * 48_000 - 11 * 48_000 % Self.part
        // 4 ms late but every 20th report (one in each 200 ms), which is on time: every
        // 250 ms watched holds one.
        var watch = SkippedCycleWatch()
        var position = start
        var steps = 0
        for index in 0..<300 {
            let late = index % 20 == 0 ? 0.0 : 4_000_000
            watch.note(position: position, timeNs: UInt64(1_000_000_000 + Double(position) * Self.nanosecondsPerSample + late), estimator: estimator)
            if watch.skippedCycle(at: position, earliestNs: 0) != nil { steps += 1 }
            position += 480
        }
        #expect(steps == 0)
        // Late throughout, but by less than the threshold.
        var calm = SkippedCycleWatch()
        #expect(Self.feed(&calm, estimator, from: start, to: start + 20 * Self.part, lateNs: 2_000_000, lateFrom: start) == nil)
    }

    @Test func theThresholdAndThePartFollowTheFragments() throws {
        let estimator = Self.steadyEstimator()
        let start = 11 * 48_000 - 11 * 48_000 % Self.part
        // Read every 64 samples (pipewire-pulse at the quantum a host asked for): a skipped
        // 64-sample cycle, 1.3 ms, is found; the threshold is 0.67 ms, parts four reads long,
        // so it is found within the fifth 256-sample part after the skip's (27 ms).
        var quick = SkippedCycleWatch()
        #expect(quick.stepThresholdNs == TimingPolicy.standard.skipStepLargestNs)
        quick.readSamples = 64
        #expect(abs(quick.stepThresholdNs - 666_667) < 1)
        #expect(quick.partSamples == 256)
        let skipAt = start + 2 * Self.part + Self.part / 2
        let (stepped, at) = try #require(
            Self.feed(&quick, estimator, from: start, to: start + 10 * Self.part, lateNs: 1_333_333,
                      lateFrom: skipAt, every: 64))
        #expect(at > skipAt && at - skipAt <= 5 * 256, "found \(at - skipAt) samples after the skip")
        let line = try #require(stepped.line)
        let expected = 1_000_000_000 + Double(at) * Self.nanosecondsPerSample + 1_333_333
        #expect(abs(line.timeNs(ofPosition: at) - expected) < 20_000, "off by \((line.timeNs(ofPosition: at) - expected) / 1e3) µs")
        // Read every 480: the same lateness is under the 2.5 ms threshold, and never a skip.
        var slow = SkippedCycleWatch()
        slow.readSamples = 480
        #expect(Self.feed(&slow, estimator, from: start, to: start + 20 * Self.part, lateNs: 1_333_333, lateFrom: start) == nil)
        #expect(slow.stepThresholdNs == TimingPolicy.standard.skipStepLargestNs)
        #expect(slow.partSamples == Self.part)
        // Every 16 samples: no lower than the least threshold, nor the shortest part.
        var fine = SkippedCycleWatch()
        fine.readSamples = 16
        #expect(fine.stepThresholdNs == TimingPolicy.standard.skipStepSmallestNs)
        #expect(fine.partSamples == SkippedCycleWatch.shortestPartSamples)
    }

    @Test func positionsGoingBackForgetTheMarks() {
        let estimator = Self.steadyEstimator()
        var watch = SkippedCycleWatch()
        let start = 11 * 48_000 - 11 * 48_000 % Self.part
        _ = Self.feed(&watch, estimator, from: start, to: start + 3 * Self.part, lateNs: 0, lateFrom: .max)
        // A new stream from 0, late throughout: judged only on its own marks (none is four
        // parts old before part 4).
        var position: Int64 = 0
        var firstStep: Int64?
        while position < 6 * Self.part {
            let time = UInt64(1_000_000_000 + Double(position) * Self.nanosecondsPerSample + 6_000_000)
            watch.note(position: position, timeNs: time, estimator: estimator)
            if firstStep == nil, watch.skippedCycle(at: position, earliestNs: 0) != nil { firstStep = position }
            position += 480
        }
        #expect(firstStep.map { $0 >= 4 * Self.part && $0 < 4 * Self.part + 480 } == true, "first step at \(String(describing: firstStep))")
    }
}
