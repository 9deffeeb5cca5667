import Foundation
import TestSupport
import Testing

@testable import DeskAudio

/// The PulseAudio backend's two timing paths on a scripted server: plain PulseAudio's reads
/// placed by the server's timing marks, pipewire-pulse's worked back from their arrival.
@Suite struct PulseScenarioTests {
    static let exactNs: Int64 = 1_000

    static func onLine(_ first: UInt64) -> (Int) -> UInt64 { { first + Scenario.ns($0 * 480) } }

    static func within(_ errors: some Collection<Int64>, _ bound: Int64 = exactNs) -> Bool {
        errors.allSatisfy { abs($0) <= bound }
    }

    @Test func plainPulseAudioStampsEveryFrameFromTheServersMarks() throws {
        let scenario = Scenario(.pulseAudio)
        try scenario.service.enable(mic: false, app: true)
        scenario.pulseReads(300)
        let headers = try scenario.headers()
        #expect(headers.count == 300)
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs))
        #expect(Self.within(errors), "\(errors.prefix(8))")
        #expect(headers.allSatisfy { $0.flags == .app })
        #expect(scenario.service.clock()?.origin == .serverClock(.app))
    }

    @Test func aNewStreamsAudioWaitsForTheFirstMarkSoTheFirstFrameIsOnTheServersClock() throws {
        // R-PULSE-FIRST-MARK: read before the server's first snapshot, the first frame was
        // stamped from its arrival and the next carried TIME_STEP.
        let scenario = Scenario(.pulseAudio)
        try scenario.service.enable(mic: false, app: true)
        scenario.pulseReads(300, marks: { $0 >= 3 && $0 % 10 == 3 })  // the first answer comes with the 4th read
        let headers = try scenario.headers()
        #expect(headers.count == 300)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs))))
        #expect(headers.allSatisfy { $0.flags == .app }, "no TIME_STEP anywhere")
    }

    @Test func aFirstMarkLaterThanTheHoldLetsTheAudioGoOnArrivalTimesThenStepsOnce() throws {
        let scenario = Scenario(.pulseAudio)
        try scenario.service.enable(mic: false, app: true)
        scenario.pulseReads(300, marks: { $0 >= 12 && $0 % 10 == 2 })  // the first answer with the 13th read
        let headers = try scenario.headers()
        #expect(headers.count == 300)
        // The audio waits for 50 ms (5 reads), then goes, stamped from its arrival; the 13th
        // read's frames are the first on the server's clock.
        let hold = TimingPolicy.standard.pulseFirstMarkHoldSamples / 480
        let stepped = headers.indices.filter { headers[$0].flags.contains(.timeStep) }
        #expect(hold == 5 && stepped == [10], "the server's clock takes over once")
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs)).dropFirst(stepped.first ?? 0)))
    }

    @Test func aHoleInAReadIsSilenceInItsPlaceAndTheAudioAfterItKeepsItsTime() throws {
        // R-PULSE-HOLE: a hole after the read's first fragment was skipped, and the audio after
        // it stamped as if it followed on, a hole early, until the next mark stepped the line.
        let scenario = Scenario(.pulseAudio)
        try scenario.service.enable(mic: false, app: true)
        scenario.pulseReads(20)
        // A read of a fragment, a hole of 480 samples, a fragment, with a mark for its start.
        let stream = scenario.app
        let position = Int(stream.pulseStreamPosition)
        let before = scenario.tone(480, for: stream)
        _ = scenario.tone(480, for: stream)
        let after = scenario.tone(480, for: stream)
        scenario.clock.set(scenario.soundTimeNs(position + 1440))
        let mark = ClockEstimator.Line(
            position: Int64(position), timeNs: Double(scenario.soundTimeNs(position)),
            nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample)
        #expect(stream.pulseRead([before, nil, after], holeFloats: 960, mark: mark))
        scenario.step()
        let headers = try scenario.headers()
        #expect(headers.count == 23 && headers.allSatisfy { $0.flags == .app })
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs))))
        #expect(scenario.service.stats().framesSkippedByServer == 1)
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 21 * 480, length: 480) }, "\(gaps)")
    }

    @Test func pipewirePulseArrivalsOnTimeStampEveryFrameExactly() throws {
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        scenario.arrivalReads(300)
        let headers = try scenario.headers()
        #expect(headers.count == 300 && headers.allSatisfy { $0.flags == .app })
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs))))
    }

    @Test func pipewirePulseArrivalsLateByUpToACycleKeepTheEarliest() throws {
        // Arrivals are late, never early: each 125 ms holds one on time, the rest up to 5.3 ms late.
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        var random = SeededRandom(seed: 7)
        scenario.arrivalReads(500, lateNs: { $0 % 12 == 0 ? 0 : UInt64.random(in: 1...5_333_333, using: &random) })
        let headers = try scenario.headers()
        #expect(headers.count == 500)
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs))
        // While the line locks (the first report was 2 ms late, the next on time) its moves are
        // flagged; none after 250 ms.
        #expect(headers.indices.filter { headers[$0].flags.contains(.timeStep) }.allSatisfy { $0 < 25 })
        #expect(headers.allSatisfy { $0.flags.subtracting(.timeStep) == .app })
        #expect(Self.within(errors.dropFirst(250), 400_000), "settled: within 0.4 ms of when the sound played")
    }

    @Test func aReadingThreadHeldUpCatchesUpInABurstWithNoStep() throws {
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        scenario.arrivalReads(300)
        scenario.arrivalBurst(6, lateNs: 2_000_000)  // 60 ms held up, read 2 ms after the last sounded
        scenario.arrivalReads(100)
        let headers = try scenario.headers()
        #expect(headers.count == 406 && headers.allSatisfy { $0.flags == .app })
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs))
        #expect(Self.within(errors))
    }

    @Test func aCycleTheGraphSkippedUnderPipewirePulseStepsTheLineOnceByItsLength() throws {
        // R-PP-SKIP: the samples after a skipped graph cycle sounded a quantum later than those
        // before them suggest, and nothing in the PulseAudio API says so.
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        scenario.arrivalReads(300)
        scenario.soundShiftNs = Scenario.ns(256)
        scenario.arrivalReads(200)
        let headers = try scenario.headers()
        #expect(headers.count == 500)
        let stepped = headers.indices.filter { headers[$0].flags.contains(.timeStep) }
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs))
        // Two parts of 125 ms, all late by the cycle, tell the skip: the frames of the 250 ms
        // before are a cycle early, then the line steps, once, and says so.
        #expect(stepped == [325])
        #expect(Self.within(errors.prefix(325)))
        let after = stepped.first ?? 0
        #expect(Self.within(errors[after...].map { $0 - Int64(Scenario.ns(256)) }))
    }

    @Test func aTransportThatCountedAStallIsNotTakenForThePath() throws {
        // R-PP-TRANSPORT: libpulse took a 55 ms stall between the server's timing reply and its
        // handling as the transport, for the second until the next reply: frames 55 ms early.
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        let update = { (index: Int) in
            PulseTimingUpdate(
                sourceUsec: 0, transportUsec: index / 100 == 3 ? 55_000 : 80,
                stamp: timeval(tv_sec: 1000 + index / 100, tv_usec: 0))
        }
        scenario.arrivalReads(600, lateNs: { _ in 80_000 }, timing: update)
        let headers = try scenario.headers()
        #expect(headers.count == 600 && headers.allSatisfy { $0.flags == .app })
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs))))
    }

    @Test(arguments: [2, 3]) func severalCyclesSkippedAtOnceUnderPipewirePulseAreSteppedToWithin120Milliseconds(
        cycles: Int
    ) throws {
        // R-PP-SKIP, a machine stalled for tens of milliseconds: two or three 256-sample cycles
        // (10.7, 16 ms), more than `largeSkipNs`, are stepped to sooner than one.
        let scenario = Scenario(.pipeWirePulse)
        try scenario.service.enable(mic: false, app: true)
        scenario.arrivalReads(300)
        scenario.soundShiftNs = Scenario.ns(cycles * 256)
        scenario.arrivalReads(200)
        let headers = try scenario.headers()
        let stepped = headers.indices.filter { headers[$0].flags.contains(.timeStep) }
        #expect(stepped.count == 1 && stepped.allSatisfy { $0 > 300 && $0 <= 312 }, "\(stepped)")
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs))
        #expect(Self.within(errors.prefix(300)))
        #expect(Self.within(errors[(stepped.first ?? 0)...].map { $0 - Int64(Scenario.ns(cycles * 256)) }))
    }
}
