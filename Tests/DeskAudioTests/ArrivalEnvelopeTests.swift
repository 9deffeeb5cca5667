@testable import DeskAudio
import TestSupport
import Testing

/// Capture times from arrivals, as the PulseAudio API gives them, through `StreamClock`: a
/// pipewire-pulse model in which the graph runs 256-sample cycles, the server sends
/// 480-sample fragments as soon as it holds one (keeping the rest back: 0 to 5.3 ms of
/// audio), and each read wakes up late by up to `wakeNs` more. Every report is late, never
/// early. (The model's reports stray 1.56 ms rms from the line, as pipewire-pulse's did in
/// `scripts/bench-latency`: 1.54 ms.)
@Suite struct ArrivalEnvelopeTests {
    static let nanosecondsPerSample = 1e9 / 48_000 * (1 + 0.0002)  // a clock 200 ppm slow
    static let startNs = 2_000_000_000.0

    static func trueTimeNs(of position: Int64) -> Double { startNs + Double(position) * nanosecondsPerSample }

    /// What a run of the model gave: the mapping's errors (mapped minus true time of each
    /// 10 ms frame's first sample) from `judgeFrom` s, sorted; the worst distance of
    /// consecutive frames' mapped times from 10 ms after the first 2 s, but for frames the
    /// line stepped at (the worker flags those); and how often it stepped or started again.
    struct Run {
        var errors: [Double]
        var worstStepNs: Double
        var relocks: Int

        /// The largest error either way.
        var worstErrorNs: Double { max(abs(errors.first!), abs(errors.last!)) }
    }

    /// Runs `seconds` of reads through a `StreamClock`, reported as arrivals of fragments of
    /// `reads` samples or (nil, to compare) as server clock times. From `stepAt` s on (until `stepUntil` s), every arrival is
    /// `lateStepNs` later; with `truthMoves` the samples sounded that much later too (a
    /// skipped graph cycle, or a latency that grew), without it only their arrivals are late
    /// (the reading thread ran late).
    /// `cycle` and `fragment` (samples) set the model's graph quantum and the fragments the
    /// server sends; at each of `skipsAt` (s) the graph skips a cycle (every sample after it
    /// sounds, and arrives, one cycle later); the first read at or after each of `lateReadsAt`
    /// (s) arrives 0.9 ms late (its thread ran late; the samples did not move); the reads
    /// due from `stallAt` (s) for `stallFor` (s) come at its end, 20 µs apart (the reading
    /// thread stalled, then caught up).
    static func run(
        seconds: Double, reads: Int?, wakeNs: Double = 300_000,
        lateStepNs: Double = 0, stepAt: Double = .infinity, stepUntil: Double = .infinity, truthMoves: Bool = true,
        judgeFrom: Double = 2, cycle: Int64 = 256, fragment: Int64 = 480, skipsAt: [Double] = [],
        lateReadsAt: [Double] = [], stallAt: Double = .infinity, stallFor: Double = 0
    ) throws -> Run {
        var lateReads = lateReadsAt.sorted()[...]
        var random = SeededRandom(seed: 7)
        let clock = StreamClock()
        var produced: Int64 = 0  // samples the graph has produced
        var sent: Int64 = 0  // samples sent to the client, in whole fragments
        var errors: [Double] = []
        var worstStep = 0.0
        var lastMapped: Double?
        var lastRelocks = 0
        var frame: Int64 = 0
        var caughtUp = 0
        func stepped(_ position: Int64) -> Bool {
            Double(position) >= stepAt * 48_000 && Double(position) < stepUntil * 48_000
        }
        let cycleNs = Double(cycle) * 1e9 / 48_000
        func skipped(_ position: Int64) -> Double {
            Double(skipsAt.filter { Double(position) >= $0 * 48_000 }.count) * cycleNs
        }
        while Double(produced) < seconds * 48_000 {
            produced += cycle
            guard produced - sent >= fragment else { continue }
            let chunk = (produced - sent) / fragment * fragment
            // The newest produced sample arrived as its cycle ended, plus the wake-up (and
            // any late step); the read's first sample is taken to be `chunk` samples older.
            var arrival = trueTimeNs(of: produced) + Double.random(in: 0...wakeNs, using: &random) + skipped(produced)
            if stepped(produced) { arrival += lateStepNs }
            if let next = lateReads.first, Double(produced) >= next * 48_000 {
                arrival += 900_000
                lateReads.removeFirst()
            }
            let stallEnd = startNs + (stallAt + stallFor) * 1e9
            if arrival >= startNs + stallAt * 1e9 && arrival < stallEnd {
                arrival = stallEnd + Double(caughtUp) * 20_000
                caughtUp += 1
            }
            let source = reads.map { StreamClock.Source.arrival(readSamples: $0, arrivedAtNs: UInt64(arrival)) } ?? .serverClock
            clock.report(position: sent, timeNs: UInt64(arrival - Double(chunk) * 1e9 / 48_000), source: source)
            sent += chunk
            let reading = try #require(clock.reading)
            while (frame + 1) * 480 <= sent {
                let mapped = reading.line.timeNs(ofPosition: frame * 480)
                if Double(frame * 480) >= judgeFrom * 48_000 {
                    var truth = trueTimeNs(of: frame * 480) + skipped(frame * 480)
                    if truthMoves && stepped(frame * 480) { truth += lateStepNs }
                    errors.append(mapped - truth)
                }
                if Double(frame * 480) >= 2 * 48_000 {
                    if let lastMapped, reading.relocks == lastRelocks {
                        worstStep = max(worstStep, abs(mapped - lastMapped - 10_000_000))
                    }
                    lastMapped = mapped
                    lastRelocks = reading.relocks
                }
                frame += 1
            }
        }
        return Run(errors: errors.sorted(), worstStepNs: worstStep, relocks: clock.reading?.relocks ?? 0)
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    /// The fit through every arrival is late by the mean hold-back and wake-up (the 2.7 ms
    /// measured on pipewire-pulse); through the envelope, by the least of them.
    @Test func theEnvelopeTakesOffTheServersHoldBackAndTheWakeUps() throws {
        let plain = try Self.run(seconds: 30, reads: nil).errors
        let enveloped = try Self.run(seconds: 30, reads: 480)
        let plainMedian = Self.percentile(plain, 0.5)
        let worst = enveloped.worstErrorNs
        print("measured: every arrival: median error \(plainMedian / 1e6) ms; enveloped: median \(Self.percentile(enveloped.errors, 0.5) / 1e6) ms, worst \(worst / 1e6) ms, consecutive frames \(enveloped.worstStepNs / 1e6) ms off 10 ms at worst, \(enveloped.relocks) steps")
        #expect(plainMedian > 2_000_000, "the model's arrivals are late by 2.7 ms on average: \(plainMedian / 1e6) ms")
        #expect(worst < 300_000, "worst error through the envelope: \(worst / 1e6) ms")
        #expect(enveloped.worstStepNs <= 50_000, "consecutive frames off their length by up to \(enveloped.worstStepNs / 1e6) ms")
        #expect(enveloped.relocks == 0, "the line stepped \(enveloped.relocks) times in a steady stream")
    }

    /// A graph cycle skipped (a stalled machine: 256 samples' time passes with no audio, and
    /// every sample after it sounds 5.3 ms later than the line says) is stepped to within
    /// 375 ms, once, and the stamps are right from then on; consecutive frames stay their
    /// length apart but at the step, which the worker flags.
    @Test func aSkippedCycleIsSteppedToAtOnce() throws {
        let skip = 256 * 1e9 / 48_000
        let run = try Self.run(seconds: 20, reads: 480, lateStepNs: skip, stepAt: 10.003, judgeFrom: 10.4)
        let worst = run.worstErrorNs
        print("measured: a cycle skipped at 10 s: worst error from 10.4 s \(worst / 1e6) ms; consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst; \(run.relocks) steps")
        #expect(run.relocks == 1, "steps: \(run.relocks)")
        #expect(worst < 300_000, "worst error from 0.4 s after the skip: \(worst / 1e6) ms")
        #expect(run.worstStepNs <= 50_000, "consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// Three cycles skipped at once (a machine that stalled for 16 ms; under CI's load the
    /// PulseAudio API's bursts were stamped 12.5 and 20.1 ms early before the watch stepped,
    /// 250-375 ms on): every arrival of the 100 ms after it is more than 7.5 ms late, and
    /// the line steps then, once, by as much.
    @Test func aSkipOfSeveralCyclesIsSteppedToWithin110Milliseconds() throws {
        let skip = 3 * 256 * 1e9 / 48_000
        let run = try Self.run(seconds: 20, reads: 480, lateStepNs: skip, stepAt: 10.003, judgeFrom: 10.12)
        print("measured: three cycles skipped at 10 s: worst error from 10.12 s \(run.worstErrorNs / 1e6) ms; consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst; \(run.relocks) steps")
        #expect(run.relocks == 1, "steps: \(run.relocks)")
        #expect(run.worstErrorNs < 300_000, "worst error from 117 ms after the skip: \(run.worstErrorNs / 1e6) ms")
        #expect(run.worstStepNs <= 50_000, "consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// The reading thread stalled for 150 ms, then catching up (its reads late by 150 ms, then
    /// 140, 130 ... handled within a few hundred microseconds; the samples sounded on time):
    /// no time step, the stamps stay right.
    @Test func aStalledReaderCatchingUpIsNoSkip() throws {
        let run = try Self.run(seconds: 20, reads: 480, stallAt: 10, stallFor: 0.15)
        print("measured: the reader stalled 150 ms at 10 s: \(run.relocks) steps, worst error \(run.worstErrorNs / 1e6) ms, consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst")
        #expect(run.relocks == 0, "steps: \(run.relocks)")
        #expect(run.worstErrorNs < 300_000, "worst error: \(run.worstErrorNs / 1e6) ms")
        #expect(run.worstStepNs <= 50_000, "consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// Read every 64 samples (pipewire-pulse at the quantum a host asked for, wake-ups
    /// within 0.05 ms), skips of a 64-sample cycle (1.3 ms) come often and close together,
    /// as they did on this 2-core machine (up to 45 in 40 s): each is stepped to within
    /// 30 ms (`SkippedCycleWatch` at half the cycle, in parts of four reads; at its former
    /// 2.5 ms and 125 ms none was, and the stamps stayed 1.3 ms early for good), and the
    /// frames between skips stay their length apart.
    @Test func frequentSkipsOfASmallCycleAreEachSteppedTo() throws {
        let skips = [4.1, 5.3, 10.0031, 10.0502, 10.0913, 10.4404, 10.5001, 12.0077]
        let run = try Self.run(
            seconds: 14, reads: 64, wakeNs: 50_000, judgeFrom: 9, cycle: 64, fragment: 64, skipsAt: skips)
        // Frames more than 0.2 ms off: those within 30 ms after a skip, at most.
        let off = run.errors.filter { abs($0) > 200_000 }.count
        print("measured: 64-sample cycles, \(skips.count) skips: \(off) frames more than 0.2 ms off, worst \(run.worstErrorNs / 1e6) ms; consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst; \(run.relocks) steps")
        #expect(off <= 3 * 6, "frames more than 0.2 ms off after 9 s: \(off)")
        #expect(run.relocks == skips.count, "steps: \(run.relocks)")
        #expect(run.worstErrorNs < 1_400_000, "worst error: \(run.worstErrorNs / 1e6) ms")
        #expect(run.worstStepNs <= 50_000, "unflagged consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// The same from the stream's start, a skip every 0.9 s, and the read after some of them
    /// 0.9 ms late: the line settles all the same, and no frame from 2 s on moves unflagged.
    /// (Before, each skip of the first two seconds started the line again from the late read
    /// and made it settle afresh, and settling follows the arrivals at once: 1.08 ms unflagged.)
    @Test func skipsFromTheStartDoNotKeepTheLineSettling() throws {
        let skips = [0.9, 1.8, 2.7, 3.6, 4.5, 5.4, 10.0031, 10.0502, 10.0913, 10.4404, 10.5001, 12.0077]
        let run = try Self.run(
            seconds: 14, reads: 64, wakeNs: 50_000, judgeFrom: 2.5, cycle: 64, fragment: 64, skipsAt: skips,
            lateReadsAt: [1.8, 2.7, 3.6, 4.5, 10.4404])
        let off = run.errors.filter { abs($0) > 200_000 }.count
        print("measured: skips from the start: \(off) frames more than 0.2 ms off from 2.5 s, worst \(run.worstErrorNs / 1e6) ms; consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst; \(run.relocks) steps")
        #expect(off <= 3 * 10, "frames more than 0.2 ms off from 2.5 s: \(off)")
        #expect(run.relocks <= skips.count + 2, "steps: \(run.relocks)")
        #expect(run.worstStepNs <= 50_000, "unflagged consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// Arrivals that become 4 ms later for good (the server's latency grew) are followed
    /// (stepped to, as a skip).
    @Test func aLaterArrivalForGoodIsFollowed() throws {
        let run = try Self.run(seconds: 20, reads: 480, lateStepNs: 4_000_000, stepAt: 10, judgeFrom: 11)
        let worst = run.worstErrorNs
        print("measured: arrivals 4 ms later from 10 s: worst error from 11 s \(worst / 1e6) ms, \(run.relocks) steps")
        #expect(worst < 300_000, "worst error from 1 s after the step: \(worst / 1e6) ms")
    }

    /// No step is taken for wake-ups that stray widely (up to 3 ms late, uniformly): no run
    /// of 250 ms is late throughout.
    @Test func wideWakeUpsAreNotTakenForSkips() throws {
        let run = try Self.run(seconds: 60, reads: 480, wakeNs: 3_000_000)
        let worst = run.worstErrorNs
        print("measured: wake-ups 0-3 ms late for 60 s: \(run.relocks) steps, worst error \(worst / 1e6) ms, consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst")
        #expect(run.relocks == 0, "steps: \(run.relocks)")
    }

    /// The reading thread running 30 ms late once, or 50 ms late for 40 ms (a busy machine;
    /// the samples sounded on time): no time step, and the stamps stay right. (The loop
    /// alone started again from the late report and again from the next: two steps, and
    /// the frames between 30 ms late.)
    @Test(arguments: [(30_000_000.0, 0.01), (50_000_000.0, 0.04)])
    func aLateWakeUpIsNoTimeStep(lateNs: Double, forSeconds: Double) throws {
        let run = try Self.run(
            seconds: 20, reads: 480, lateStepNs: lateNs, stepAt: 10, stepUntil: 10 + forSeconds, truthMoves: false)
        let worst = run.worstErrorNs
        print("measured: wake-ups \(lateNs / 1e6) ms late for \(forSeconds * 1000) ms at 10 s: \(run.relocks) steps, worst error \(worst / 1e6) ms, consecutive frames \(run.worstStepNs / 1e6) ms off 10 ms at worst")
        #expect(run.relocks == 0, "steps: \(run.relocks)")
        #expect(worst < 300_000, "worst error: \(worst / 1e6) ms")
        #expect(run.worstStepNs <= 50_000, "consecutive frames off their length by up to \(run.worstStepNs / 1e6) ms")
    }

    /// The reading thread running 3 ms late for 400 ms (a busy machine; the samples sounded
    /// on time) may be taken for a skip; the first arrival after it, too early for the
    /// stepped line, steps back, and the stamps are right again within a second.
    @Test func aStretchOfLateWakeUpsIsUndone() throws {
        let run = try Self.run(
            seconds: 20, reads: 480, lateStepNs: 3_000_000, stepAt: 10, stepUntil: 10.4, truthMoves: false,
            judgeFrom: 11.4)
        let worst = run.worstErrorNs
        print("measured: wake-ups 3 ms late from 10 to 10.4 s: \(run.relocks) steps, worst error from 11.4 s \(worst / 1e6) ms")
        #expect(run.relocks % 2 == 0, "steps: \(run.relocks) (a step taken is undone)")
        #expect(worst < 300_000, "worst error from 1 s after the late stretch: \(worst / 1e6) ms")
    }

    @Test func theEnvelopeKeepsTheLeastDistanceOfTheLastSecond() {
        var envelope = ArrivalEnvelope()
        #expect(envelope.earliestNs == 0)
        envelope.add(distanceNs: 300_000, position: 0)
        envelope.add(distanceNs: -2_000_000, position: 6_000)
        envelope.add(distanceNs: 1_000_000, position: 47_000)
        #expect(envelope.earliestNs == -2_000_000)
        // A second on (a part past the -2 ms one): forgotten.
        envelope.add(distanceNs: -500_000, position: 54_000)
        #expect(envelope.earliestNs == -500_000)
        // A position going back (a new stream) starts it again.
        envelope.add(distanceNs: 100_000, position: 100)
        #expect(envelope.earliestNs == 100_000)
        envelope.reset()
        #expect(envelope.earliestNs == 0)
    }
}
