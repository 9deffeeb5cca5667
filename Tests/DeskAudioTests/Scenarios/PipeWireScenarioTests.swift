import Foundation
import TestSupport
import Testing

@testable import DeskAudio

/// The native PipeWire path on a scripted graph: what a host gets, exactly, for each thing a
/// real graph does to a capture stream (docs/reliability.md names the incidents).
@Suite struct PipeWireScenarioTests {
    /// Capture times are exact to well under a sample (20.8 µs): 1 µs.
    static let exactNs: Int64 = 1_000
    /// Where a monitor's first sample sounded: one 256-sample quantum before the first cycle.
    static let firstMonitorSampleNs = Scenario.startNs - Scenario.ns(256)

    /// Frames on one line from `first`, frame `index` holding sample `index * 480` on.
    static func onLine(_ first: UInt64, shiftedBy samples: Int = 0) -> (Int) -> UInt64 {
        { first + Scenario.ns($0 * 480 + samples) }
    }

    static func within(_ errors: some Collection<Int64>) -> Bool { errors.allSatisfy { abs($0) <= exactNs } }

    @Test func steadyMonitorCyclesStampEveryFrameOnTheGraphClock() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(375)  // 2 s of 256-sample cycles
        let headers = try scenario.headers()
        #expect(headers.count == 200)
        let errors = try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))
        #expect(Self.within(errors), "\(errors.prefix(8))…\(errors.max()!)")
        #expect(headers.map(\.sequence) == (0..<200).map(UInt32.init))
        #expect(headers.map(\.sampleClock) == (0..<200).map { UInt64($0 * 480) })
        #expect(headers.allSatisfy { $0.flags == .app }, "no step, no gap")
        let stats = scenario.service.stats()
        #expect(stats.framesSent == 200 && stats.framesSkippedByServer == 0 && stats.serverZeroCycles == 0)
        let clock = try #require(scenario.service.clock())
        #expect(clock.sampleClock == 96_000 && clock.origin == .serverClock(.app))
        #expect(abs(Int64(bitPattern: clock.timeNs &- (Self.firstMonitorSampleNs + Scenario.ns(96_000)))) <= Self.exactNs)
    }

    @Test func aMicrophoneIsStampedByTheDevicesDelayWithNoQuantumBehind() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: true, app: false)
        scenario.cycles(188, delayTicks: 512, stream: scenario.mic)
        let headers = try scenario.headers()
        #expect(headers.count == 100 && headers.allSatisfy { $0.flags == .mic })
        let errors = try scenario.timeErrors(Self.onLine(Scenario.startNs - Scenario.ns(512)))
        #expect(Self.within(errors), "\(errors.prefix(8))")
        #expect(scenario.service.stats().mic?.serverLatencyNs == 10_666_666, "512 ticks, in whole ns")
    }

    @Test func cyclesTheStreamMissedBecomeSilenceInTheirPlaceAndAreCounted() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        scenario.missCycles(3)
        scenario.cycles(100)
        let headers = try scenario.headers()
        #expect(headers.count == 203 * 256 / 480)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))), "the frames keep their place")
        #expect(headers.allSatisfy { $0.flags == .app }, "nothing stepped: the silence stands where the audio was")
        #expect(scenario.service.stats().framesSkippedByServer == 2, "768 samples: 2 frames' worth, rounded up")
        // The decoded gap: 768 samples at 25 600, less the codec's smearing of its edges.
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 25_600, length: 768) }, "\(gaps)")
    }

    @Test func aBufferHandedTwiceAfterAStallCountsOnceAndTheSkipBeforeIt() throws {
        // R-PW-DOUBLE-CALL: PipeWire may call a stream that resumes twice for one cycle, the
        // second time with the same buffer again.
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        scenario.missCycles(2)
        let buffer = scenario.tone(256, for: scenario.app)
        for _ in 0..<2 {
            scenario.app.pipeWireBuffer(buffer, nowNs: scenario.graphTimeNs, ticks: scenario.graphTicks, durationTicks: 256)
        }
        scenario.advanceGraph(256)
        scenario.step()
        scenario.cycles(99)
        let headers = try scenario.headers()
        #expect(headers.count == (100 + 2 + 1 + 99) * 256 / 480)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))))
        #expect(scenario.service.stats().framesSkippedByServer == 2)
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 25_600, length: 512) }, "the two cycles missed: \(gaps)")
    }

    @Test func aStalledCycleHandedLateThenItsSuccessorPutsTheSkipBetweenThem() throws {
        // R-PW-DOUBLE-CALL, the other case: the first call is the cycle pending when the
        // stream stalled (right after the one before), the second, at the same position, the
        // audio after the cycles missed: one fewer missed than counted.
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        let pending = scenario.tone(256, for: scenario.app)  // the cycle at 25 600
        scenario.missCycles(1)  // at 25 856: lost
        scenario.advanceGraph(256)  // the pending cycle's place, already counted above
        let after = scenario.tone(256, for: scenario.app)  // the cycle at 26 112
        for buffer in [pending, after] {
            scenario.app.pipeWireBuffer(buffer, nowNs: scenario.graphTimeNs, ticks: scenario.graphTicks, durationTicks: 256)
        }
        scenario.advanceGraph(256)
        scenario.step()
        scenario.cycles(99)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))))
        #expect(try scenario.headers().count == (100 + 3 + 99) * 256 / 480)
        #expect(scenario.service.stats().framesSkippedByServer == 1, "one cycle missed, not the two counted")
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 25_856, length: 256) }, "\(gaps)")
    }

    /// R-PW-ZERO-CYCLE: PipeWire 0.3.65 hands one consumer of a monitor such a run now and then:
    /// one 256-sample cycle, or (a clean-clone run's trace at 2.5 ms frames) two of 128, the
    /// graph's position going on a quantum a buffer. One cycle more in a row is a pause.
    @Test(arguments: [(256, 1), (128, 2)])
    func aRunOfZerosAsLongAsOneOfTheRigsCyclesIsCountedAndPassedOnAsItCame(quantum: Int, cycles: Int) throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(25_600 / quantum, quantum: quantum)
        scenario.cycles(cycles, quantum: quantum, content: { stream, quantum in
            _ = scenario.tone(quantum, for: stream)
            return scenario.zeros(quantum)
        })
        scenario.cycles(25_600 / quantum, quantum: quantum)
        let stats = scenario.service.stats()
        #expect(stats.serverZeroCycles == UInt64(cycles) && stats.framesSkippedByServer == 0)
        let firstSampleNs = Scenario.startNs - Scenario.ns(quantum)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(firstSampleNs))))
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 25_600, length: 256) }, "\(gaps)")
        scenario.cycles(cycles + 1, quantum: quantum, content: { _, quantum in scenario.zeros(quantum) })
        scenario.cycles(10, quantum: quantum)
        #expect(scenario.service.stats().serverZeroCycles == UInt64(cycles), "\(cycles + 1) cycles in a row: a pause")
    }

    @Test func a150MillisecondStallIsFilledWithSilenceAndTheFramesKeepTheirPlace() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        scenario.missCycles(28)  // 149.3 ms
        scenario.cycles(100)
        let headers = try scenario.headers()
        #expect(headers.count == 228 * 256 / 480)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))))
        #expect(headers.allSatisfy { $0.flags == .app })
        #expect(scenario.service.stats().framesSkippedByServer == 15, "7168 samples: 15 frames' worth")
    }

    @Test func aStallLongerThanTheFillStepsTheTimelineAndSaysSo() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        scenario.missCycles(75)  // 400 ms: 250 of it filled
        scenario.cycles(100)
        let headers = try scenario.headers()
        let filled = TimingPolicy.standard.longestSkipFilledSamples
        // The sample clock runs on by what was filled; the times jump by the whole stall.
        #expect(headers.count == (200 * 256 + filled) / 480)
        let stepped = try #require(headers.firstIndex { $0.flags.contains(.timeStep) })
        #expect(headers.filter { $0.flags.contains(.timeStep) }.count == 1)
        #expect(headers.allSatisfy { $0.flags.subtracting(.timeStep) == .app })
        let errors = try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))
        #expect(Self.within(errors[..<(stepped - 1)]), "on the line before the stall")
        let missedNs = Int64(Scenario.ns(75 * 256 - filled))
        #expect(
            Self.within(errors[(stepped + 1)...].map { $0 - missedNs }), "on the line after, by the unfilled part: \(errors[stepped...].prefix(4))")
    }

    @Test(arguments: [Int64(-1_920), 1_920])
    func aStreamsFirstUntimedBufferAfterARestartWaitsForTheServersLine(offsetTicks: Int64) throws {
        // R-RESTART-LINE: the new stream's first buffer came before its first time, the buffers
        // after it on the server's line `offsetTicks` off its arrival. Framed at once, that
        // buffer measured the outage by its arrival and the first frame took the line's time
        // (in clean-clone run 74, 83 ms apart): the first chunk after a break waits for a
        // whole frame, and both are on the line.
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(188)
        let before = try scenario.headers().count
        scenario.restartServer(downNs: 600_000_000, upNs: 600_000_000)
        #expect(scenario.server.streams.count == 2)
        let resumedTicks = scenario.graphTicks
        scenario.app.pipeWireBuffer(scenario.tone(256, for: scenario.app), report: .untimed)
        scenario.advanceGraph(256)
        scenario.step()
        #expect(try scenario.headers().count == before, "no frame from the untimed buffer alone")
        scenario.cycles(100, delayTicks: offsetTicks)
        let headers = try scenario.headers()
        let (last, first) = (headers[before - 1], headers[before])
        #expect(first.flags == [.app, .afterGap, .timeStep])
        #expect(headers[(before + 1)...].allSatisfy { $0.flags == .app }, "one line from the first frame on")
        // The first frame's first sample: the untimed buffer's, one quantum before the line's
        // first timed one (a monitor's buffer is a quantum behind its cycle).
        let lineNs = Double(Scenario.startNs + Scenario.ns(Int(resumedTicks))) - Double(offsetTicks + 256) * 1e9 / 48_000
        let offNs = Double(first.captureTimeNs) - lineNs
        #expect(abs(offNs) <= Double(Self.exactNs), "\(offNs) ns off the line")
        let jumpNs = Int64(Scenario.ns(Int(first.sampleClock - last.sampleClock)))
        let timesNs = Int64(first.captureTimeNs) - Int64(last.captureTimeNs)
        #expect(abs(timesNs - jumpNs) <= Self.exactNs, "the sample clock moved \(jumpNs) ns, the times \(timesNs)")
    }

    @Test func aQuantumChangeKeepsEveryFrameOnTheGraphClock() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100, quantum: 256)
        // From now on the graph cycles every 1024 samples; a monitor's buffer holds the sink's
        // previous cycle, so the first cycle of the new length still hands 256.
        scenario.cycles(1, quantum: 1024, content: { stream, _ in scenario.tone(256, for: stream) })
        scenario.cycles(50, quantum: 1024)
        let headers = try scenario.headers()
        #expect(headers.count == (101 * 256 + 50 * 1024) / 480)
        let errors = try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))
        #expect(Self.within(errors), "\(errors.enumerated().filter { abs($0.1) > 1000 }.prefix(4))")
        #expect(headers.allSatisfy { $0.flags == .app })
        #expect(scenario.service.stats().framesSkippedByServer == 0)
    }

    @Test func aPositionJumpTheCycleTimesDoNotBearOutIsNoSkip() throws {
        // The graph's driver changed: its position jumps, its time does not.
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(100)
        let jumped = scenario.graphTicks + 1_000_000
        let stream = scenario.app
        for cycle in 0..<100 {
            let buffer = scenario.tone(256, for: stream)
            stream.pipeWireBuffer(
                buffer, nowNs: scenario.graphTimeNs, ticks: jumped + UInt64(cycle * 256), durationTicks: 256)
            scenario.advanceGraph(256)
            scenario.step()
        }
        #expect(scenario.service.stats().framesSkippedByServer == 0)
        #expect(try scenario.quietStretches().isEmpty)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Self.firstMonitorSampleNs))))
    }

    @Test func atA64SampleQuantumCyclesMissedAreASkipThoughTheirTimesStrayAndAJumpTheyDoNotBearOutIsNone() throws {
        // `cycleJumpToleranceNs`: at 64 samples (1.3 ms) a cycle's own length tolerates little,
        // and a graph run late (R-PW-GRAPH-LATE) starts the cycle after a skip up to a few ms
        // off its position's time.
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: false, app: true)
        scenario.cycles(400, quantum: 64)
        scenario.missCycles(4, quantum: 64)  // 256 samples gone
        let late = scenario.tone(64, for: scenario.app)
        scenario.app.pipeWireBuffer(late, nowNs: scenario.graphTimeNs + 3_000_000, ticks: scenario.graphTicks, durationTicks: 64)
        scenario.advanceGraph(64)
        scenario.step()
        scenario.cycles(400, quantum: 64)
        #expect(scenario.service.stats().framesSkippedByServer == 1, "256 samples: 1 frame's worth")
        // The driver changed: the position jumps 6 ms' worth, the cycle's time does not.
        let jumped = scenario.graphTicks + 288
        for cycle in 0..<400 {
            let buffer = scenario.tone(64, for: scenario.app)
            scenario.app.pipeWireBuffer(buffer, nowNs: scenario.graphTimeNs, ticks: jumped + UInt64(cycle * 64), durationTicks: 64)
            scenario.advanceGraph(64)
            scenario.step()
        }
        #expect(scenario.service.stats().framesSkippedByServer == 1, "no skip more")
        let gaps = try scenario.quietStretches()
        #expect(gaps.count == 1 && gaps.allSatisfy { isGap($0, at: 400 * 64, length: 256) }, "\(gaps)")
        // Every frame on the graph's line; the late cycle's report may relock the server
        // clock's line (1 ms or more off it), so the frame holding it may carry TIME_STEP, no other.
        let headers = try scenario.headers()
        #expect(headers.count == (805 * 64 + 400 * 64) / 480)
        #expect(Self.within(try scenario.timeErrors(Self.onLine(Scenario.startNs - Scenario.ns(64)))))
        let lateFrame = (400 + 4) * 64 / 480
        #expect(headers.indices.allSatisfy { headers[$0].flags.subtracting($0 == lateFrame ? .timeStep : []) == .app })
    }
}

/// Whether a decoded quiet stretch (`Scenario.quietStretches`) is the gap of `length`
/// samples of silence at `start`: inside it, and all of it but the codec's smearing of its
/// edges (2.5 ms on each side at the most).
func isGap(_ stretch: Range<Int>, at start: Int, length: Int) -> Bool {
    stretch.lowerBound >= start && stretch.upperBound <= start + length + 8 && stretch.count >= length - 2 * 120
}
