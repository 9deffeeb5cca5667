import DeskAudio
import TestSupport
import Testing

/// The clock mapping against a synthetic server: an audio clock whose samples run 0.1 % fast
/// or slow against CLOCK_MONOTONIC, reported in chunks of varying size with jittery
/// timestamps, as a server's graph clock reports them.
@Suite struct ClockEstimatorTests {
    /// A server whose sample `n` truly sounds at `startNs + n * nanosecondsPerSample`, and
    /// which reports each chunk's first sample with up to `jitterNs` of error either way.
    struct SyntheticServer {
        var nanosecondsPerSample: Double
        var startNs = 5_000_000_000.0
        var jitterNs: Double
        var position: Int64 = 0
        var random = SeededRandom(seed: 35)

        func trueTimeNs(of position: Int64) -> Double { startNs + Double(position) * nanosecondsPerSample }

        /// The next report, then the chunk (256 to 1024 samples) moves the position on.
        mutating func nextReport() -> (position: Int64, timeNs: UInt64) {
            let noise = Double.random(in: -jitterNs...jitterNs, using: &random)
            let report = (position, UInt64(trueTimeNs(of: position) + noise))
            position += Int64.random(in: 256...1024, using: &random)
            return report
        }
    }

    /// Runs `seconds` of reports; returns the worst mapping error (ns) after the first second
    /// and the worst difference between consecutive 10 ms frames' mapped times and 10 ms.
    static func run(
        drift: Double, jitterNs: Double, seconds: Double
    ) -> (worstErrorNs: Double, worstStepErrorNs: Double, estimator: ClockEstimator) {
        var server = SyntheticServer(nanosecondsPerSample: 1e9 / 48_000 * (1 + drift), jitterNs: jitterNs)
        var estimator = ClockEstimator()
        var worstError = 0.0
        var worstStep = 0.0
        var frame: Int64 = 0
        var lastFrameTime: Double?
        while Double(server.position) < seconds * 48_000 {
            let report = server.nextReport()
            estimator.report(position: report.position, timeNs: report.timeNs)
            guard let line = estimator.line else { continue }
            // Frames the worker would stamp now: those that end before the reported position.
            while (frame + 1) * 480 <= report.position {
                let mapped = line.timeNs(ofPosition: frame * 480)
                if Double(report.position) >= 48_000 {  // judged after one second
                    worstError = max(worstError, abs(mapped - server.trueTimeNs(of: frame * 480)))
                    if let lastFrameTime { worstStep = max(worstStep, abs(mapped - lastFrameTime - 10_000_000)) }
                }
                lastFrameTime = mapped
                frame += 1
            }
        }
        return (worstError, worstStep, estimator)
    }

    @Test(arguments: [0.001, -0.001])
    func followsA0Point1PercentDriftWithin0Point1MsAfterOneSecond(drift: Double) {
        let result = Self.run(drift: drift, jitterNs: 100_000, seconds: 60)
        print("measured: drift \(drift * 1e6) ppm, ±0.1 ms reports: worst error after 1 s \(result.worstErrorNs / 1e6) ms, rate \(result.estimator.rateErrorPPM) ppm")
        #expect(result.worstErrorNs <= 100_000, "worst error after 1 s: \(result.worstErrorNs / 1e6) ms")
        #expect(abs(result.estimator.rateErrorPPM - drift * 1e6) < 50,
                "rate \(result.estimator.rateErrorPPM) ppm for a drift of \(drift * 1e6) ppm")
        #expect(result.estimator.relocks == 0)
    }

    @Test func consecutiveFramesAreOneFrameApartWithin0Point05MsOverTenMinutes() {
        let result = Self.run(drift: 0.001, jitterNs: 100_000, seconds: 600)
        print("measured: 10 min, ±0.1 ms reports: worst step \(result.worstStepErrorNs / 1e6) ms, worst error \(result.worstErrorNs / 1e6) ms, jitter \(result.estimator.jitterNs / 1e6) ms")
        #expect(result.worstStepErrorNs <= 50_000, "worst frame step error: \(result.worstStepErrorNs / 1e6) ms")
        #expect(result.worstErrorNs <= 100_000, "worst error: \(result.worstErrorNs / 1e6) ms")
        // Uniform within ±0.1 ms: 0.058 ms root mean square.
        #expect(abs(result.estimator.jitterNs - 57_700) < 15_000, "jitter estimate \(result.estimator.jitterNs / 1e6) ms")
    }

    /// Five times the jitter (PulseAudio's timing reports are coarser than PipeWire's graph
    /// clock): the line strays further, but not by the jitter itself.
    @Test func reportsJitteringByHalfAMillisecondStrayAQuarterAtMost() {
        let result = Self.run(drift: -0.001, jitterNs: 500_000, seconds: 120)
        print("measured: ±0.5 ms reports: worst error after 1 s \(result.worstErrorNs / 1e6) ms, worst step \(result.worstStepErrorNs / 1e6) ms, \(result.estimator.relocks) relocks")
        #expect(result.worstErrorNs <= 250_000, "worst error after 1 s: \(result.worstErrorNs / 1e6) ms")
        #expect(result.worstStepErrorNs <= 100_000, "worst frame step error: \(result.worstStepErrorNs / 1e6) ms")
        #expect(result.estimator.relocks <= 2, "jitter taken for steps: \(result.estimator.relocks) relocks")
    }

    /// An exact clock (PipeWire's graph clock) reporting every 128 samples for `reports`
    /// reports, its timestamps moved on by `steps` (at which report, by how many ns). Returns
    /// the worst error of the line one 10 ms frame ahead from the last step on, and the relocks.
    static func exactClock(reports: Int, steps: [Int: Double]) throws -> (worstAfterLastStepNs: Double, relocks: Int) {
        var estimator = ClockEstimator()
        var position: Int64 = 0
        var offset = 0.0
        var worst = 0.0
        let lastStep = steps.keys.max() ?? 0
        for report in 0..<reports {
            offset += steps[report] ?? 0
            let truth = 1e9 + Double(position) * 1e9 / 48_000 + offset
            estimator.report(position: position, timeNs: UInt64(truth))
            if report >= lastStep {
                let line = try #require(estimator.line)
                worst = max(worst, abs(line.timeNs(ofPosition: position + 480) - (truth + 480 * 1e9 / 48_000)))
            }
            position += 128
        }
        return (worst, estimator.relocks)
    }

    /// A step of one 128-sample quantum, as when the graph's quantum changes under a running
    /// stream: the line takes the step at the report that shows it, instead of drifting over
    /// to it for seconds (as the loop alone did: stamps 2.5 ms off in a PipeWire 1.4 run).
    @Test func aQuantumStepInAnExactClockIsTakenAtOnce() throws {
        let result = try Self.exactClock(reports: 2000, steps: [1000: 2_666_667])
        #expect(result.relocks == 1)
        #expect(result.worstAfterLastStepNs < 10_000, "worst error after the step: \(result.worstAfterLastStepNs / 1e6) ms")
    }

    /// A stall (100 ms off) does not leave the jitter estimate so large that a quantum step
    /// 2 s later is smoothed in instead of taken.
    @Test func aQuantumStepAfterAStallIsStillTakenAtOnce() throws {
        let result = try Self.exactClock(reports: 3000, steps: [1000: 100_000_000, 1750: 2_666_667])
        #expect(result.relocks == 2)
        #expect(result.worstAfterLastStepNs < 10_000, "worst error after the step: \(result.worstAfterLastStepNs / 1e6) ms")
    }

    /// On a noisy clock (reports 4 ms either side of the truth, so eight jitters are past it)
    /// the line starts again only from a report more than `TimingPolicy.clockRelockNs` (20 ms)
    /// off it: 15 ms off is jitter, smoothed in; 25 ms off starts it again.
    @Test func onANoisyClockOnlyAReportPastTheRelockDistanceStartsTheLineAgain() throws {
        var estimator = ClockEstimator()
        var position: Int64 = 0
        func jittery(_ count: Int) {
            for index in 0..<count {
                let truth = 1_000_000_000 + Double(position) * 1e9 / 48_000
                estimator.report(position: position, timeNs: UInt64(truth + (index.isMultiple(of: 2) ? 4e6 : -4e6)))
                position += 480
            }
        }
        func reportOffTheLine(byNs offset: Double) throws {
            let line = try #require(estimator.line)
            estimator.report(position: position, timeNs: UInt64(line.timeNs(ofPosition: position) + offset))
            position += 480
        }
        jittery(400)  // (the first reports, taken for steps until the jitter is known, start it again)
        #expect(estimator.jitterNs > 2_500_000, "eight jitters past the relock distance")
        let relocks = estimator.relocks
        try reportOffTheLine(byNs: 15_000_000)
        jittery(400)
        #expect(estimator.relocks == relocks, "15 ms off: jitter")
        try reportOffTheLine(byNs: 25_000_000)
        #expect(estimator.relocks == relocks + 1, "25 ms off: the line starts again")
    }

    @Test func aStallFarOffTheLineStartsItAgainFromTheReport() {
        var estimator = ClockEstimator()
        for chunk in 0..<200 {
            estimator.report(position: Int64(chunk) * 480, timeNs: UInt64(1_000_000_000 + chunk * 10_000_000))
        }
        // The server stalled: the next chunk comes 100 ms later than its samples say.
        estimator.report(position: 200 * 480, timeNs: UInt64(1_000_000_000 + 200 * 10_000_000 + 100_000_000))
        #expect(estimator.relocks == 1)
        let line = try! #require(estimator.line)
        #expect(abs(line.timeNs(ofPosition: 200 * 480) - 3_100_000_000) < 1)
        // A position going back (a new stream) starts it again too.
        estimator.report(position: 0, timeNs: 4_000_000_000)
        #expect(estimator.relocks == 2)
        estimator.reset()
        #expect(estimator.line == nil && estimator.relocks == 0)
    }
}
