import Foundation
import TestSupport
import Testing

@testable import DeskAudio

/// The capture service's answers to what servers do to it, on each of the library's three
/// timing paths (native PipeWire, plain PulseAudio, pipewire-pulse), on a virtual clock:
/// default changes, restarts of the server and of the session manager, refusals, the zero
/// gate's counts, two sources on two clocks.
@Suite struct ServiceScenarioTests {
    static let paths: [ScriptedServer.Path] = [.pipeWire, .pulseAudio, .pipeWirePulse]
    /// Capture times against the sample clock: within a sample across a gap (the outage is
    /// counted in whole samples), 1 µs elsewhere.
    static let sampleNs: Int64 = 20_834

    static func events(_ scenario: Scenario) -> [LibraryEvent] { scenario.events.map(\.0) }

    @Test(arguments: paths) func aDefaultChangeTheServerFollowsIsToldAndTheFramesGoOn(path: ScriptedServer.Path) throws {
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(100)
        scenario.app.move(to: "headset.monitor")
        scenario.play(100)
        let headers = try scenario.headers()
        #expect(headers.count == 200 && headers.allSatisfy { $0.flags == .app })
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= 1_000 })
        #expect(scenario.events.map(\.0) == [.connected, .deviceChanged])
        #expect(scenario.events.last?.1 == "app audio: headset.monitor")
        #expect(scenario.server.streams.count == 1, "the server moved the stream: nothing reopened")
    }

    @Test(arguments: paths) func aServerRestartIsRecoveredWithTheGapFlaggedAndTheSampleClockMovedByTheOutage(
        path: ScriptedServer.Path
    ) throws {
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(100)
        let before = try scenario.headers().count
        scenario.server.isAnswering = false
        scenario.app.fail()
        scenario.idle(600_000_000)  // tried at 0.2 s (fails: 250 ms back-off), 0.6 s (fails: 500 ms)
        #expect(scenario.server.streams.count == 1 && Self.events(scenario) == [.connected, .disconnected])
        scenario.server.isAnswering = true
        scenario.idle(600_000_000)  // the next try, at 1.2 s, opens the stream again
        #expect(scenario.server.streams.count == 2 && Self.events(scenario) == [.connected, .disconnected, .connected])
        scenario.play(100)
        let headers = try scenario.headers()
        #expect(headers.count == before + 100)
        let first = headers[before]
        #expect(first.flags == [.app, .afterGap, .timeStep], "the gap and the new line are both flagged")
        #expect(headers.map(\.sequence) == (0..<UInt32(headers.count)).map { $0 }, "the sequence runs on")
        #expect(headers.enumerated().allSatisfy { $0.offset == before || $0.element.flags == .app })
        // The sample clock jumped by the outage: every frame's time is its sample clock's.
        let errors = try scenario.timeErrorsBySampleClock()
        #expect(errors.allSatisfy { abs($0) <= Self.sampleNs }, "\(errors[(before - 2)...].prefix(5))")
        let outage = first.sampleClock - (headers[before - 1].sampleClock + 480)
        #expect(outage >= 1_200 * 48 - 480 && outage <= 1_200 * 48 + 480, "\(outage) samples")
    }

    @Test(arguments: paths) func aStreamTheSessionManagerStopsFeedingIsReopenedAndLinkedByTheLibraryAtTheSecondStall(
        path: ScriptedServer.Path
    ) throws {
        // R-WP-RESTART: a restarted WirePlumber does not link the streams it had; the stream is
        // connected and silent.
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(100)
        scenario.idle(1_800_000_000)
        #expect(Self.events(scenario) == [.connected], "2 s of patience")
        scenario.idle(200_000_000)
        #expect(Self.events(scenario) == [.connected, .stalled, .connected])
        #expect(scenario.server.streams.map(\.linkingItself) == [false, false])
        scenario.idle(800_000_000)
        #expect(Self.events(scenario).count == 3, "a reopened stream gets 1 s")
        scenario.idle(200_000_000)
        #expect(Self.events(scenario) == [.connected, .stalled, .connected, .stalled, .connected])
        #expect(scenario.server.streams.map(\.linkingItself) == [false, false, true], "the library links it itself")
        scenario.play(100)
        let headers = try scenario.headers()
        #expect(headers.count == 200 && headers[100].flags == [.app, .afterGap, .timeStep])
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= Self.sampleNs })
    }

    @Test(arguments: paths) func aStallAndThenARestartWithNoAudioBetweenAreOneGapInTheSampleClock(
        path: ScriptedServer.Path
    ) throws {
        // R-RESTART-GAP: a stall (stream reopened after 2 s) and the daemon's restart after it,
        // with no audio between, each moved the sample clock from the same last chunk: the
        // outage counted twice.
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(100)
        scenario.idle(2_200_000_000)
        #expect(Self.events(scenario) == [.connected, .stalled, .connected])
        scenario.restartServer(downNs: 1_000_000_000, upNs: 1_000_000_000)
        #expect(scenario.server.streams.count == 3)
        scenario.play(100)
        let headers = try scenario.headers()
        #expect(headers.count == 200 && headers.indices.filter { headers[$0].flags.contains(.afterGap) } == [100])
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= Self.sampleNs })
    }

    @Test(arguments: paths) func aServerThatRefusesFailsTheStartWithItsReasonAndLeavesNothingRunning(
        path: ScriptedServer.Path
    ) throws {
        let scenario = Scenario(path)
        scenario.server.isAnswering = false
        #expect(throws: DeskAudioError.noServer("scripted \(path) is off")) { try scenario.service.enable(mic: true, app: true) }
        #expect(scenario.server.streams.isEmpty && scenario.service.activeBackend == nil)
        scenario.server.isAnswering = true
        #expect(throws: DeskAudioError.noDevice("the audio server has no sink named nowhere")) {
            try scenario.service.setDevice("nowhere", forMic: false)
        }
        try scenario.service.enable(mic: false, app: true)
        scenario.play(10)
        #expect(try scenario.headers().count == 10)
    }

    @Test(arguments: paths) func theZeroGateHoldsBackExactlyTheFramesAfter800SilentOnesAndOpensOnTheFirstSound(
        path: ScriptedServer.Path
    ) throws {
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(100)
        scenario.silence(1000)
        scenario.play(100)
        let headers = try scenario.headers()
        #expect(headers.count == 100 + 800 + 100)
        let stats = scenario.service.stats()
        #expect(stats.framesCaptured == 1200 && stats.framesSent == 1000 && stats.framesGated == 200)
        #expect(headers.indices.filter { headers[$0].flags.contains(.afterGap) } == [900])
        #expect(headers[900].sampleClock == 1100 * 480, "the sample clock ran on while the gate was shut")
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= 1_000 })
    }

    @Test func appAudioAndTheMicrophoneOnTwoClocksAreMixedAndStampedOnAppAudios() throws {
        let scenario = Scenario(.pipeWire)
        try scenario.service.enable(mic: true, app: true)
        let (app, mic) = (scenario.app, scenario.mic)
        for _ in 0..<200 {
            scenario.cycles(1, quantum: 480, stream: app)
            // The microphone's device is 2 ms behind and plays 1500 Hz; its graph buffer comes in the same cycle.
            let samples = scenario.tone(480, for: mic, frequency: 1500)
            mic.pipeWireBuffer(samples, nowNs: scenario.graphTimeNs, ticks: scenario.graphTicks, delayTicks: 96, durationTicks: 480)
            scenario.step()
        }
        let headers = try scenario.headers()
        #expect(headers.count >= 198 && headers.dropFirst().allSatisfy { $0.flags == [.app, .mic] })
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= 1_000 }, "on app audio's clock")
        let audio = SignalAnalysis.left(try scenario.decoded().dropFirst(48_000))
        #expect(abs(SignalAnalysis.toneLevelDecibels(audio, frequency: 1000) - SignalAnalysis.toneLevelDecibels(audio, frequency: 1500)) < 1)
    }

    @Test(arguments: paths) func aFrameLengthChangedWhileCapturingTakesEffectAtAFrameBoundary(path: ScriptedServer.Path) throws {
        let scenario = Scenario(path)
        try scenario.service.enable(mic: false, app: true)
        scenario.play(50)
        scenario.service.settings.setFrameDuration(.ms5)
        scenario.play(50)
        let headers = try scenario.headers()
        #expect(headers.prefix(50).allSatisfy { $0.frameSamples == 480 })
        #expect(headers.count == 150 && headers.dropFirst(50).allSatisfy { $0.frameSamples == 240 })
        #expect(headers.dropFirst().indices.allSatisfy { headers[$0].sampleClock == headers[$0 - 1].sampleClock + UInt64(headers[$0 - 1].frameSamples) })
        #expect(try scenario.timeErrorsBySampleClock().allSatisfy { abs($0) <= 1_000 })
        #expect(headers.allSatisfy { $0.flags == .app })
    }

    /// A viewer's encoder takes the microphone as PCM (`setCapturedAudioTap`): the mixed
    /// chunks, every sample as captured, each with its last sample's capture time on the
    /// frames' line, beside the frames themselves.
    @Test func theCapturedAudioTapHandsEverySampleWithItsCaptureTime() throws {
        let scenario = Scenario(.pipeWire)
        let tap = AudioChunkRing()
        scenario.service.setCapturedAudioTap(tap)
        try scenario.service.enable(mic: true, app: false)
        var played: [Float] = []
        scenario.cycles(100, delayTicks: 512, stream: scenario.mic) { stream, quantum in
            let tone = scenario.tone(quantum, for: stream)
            played += tone
            return tone
        }
        let pieces = AudioChunkRingTests.drained(tap)
        let samples = pieces.flatMap(\.samples)
        #expect(samples.count == 100 * 256 * 2 && samples == played, "\(samples.count) floats, as played")
        let firstNs = Scenario.startNs - Scenario.ns(512)  // the device's delay before the first cycle
        var position = 0
        let errors = pieces.map { piece -> Int64 in
            position += piece.samples.count / 2
            return Int64(bitPattern: piece.endNs &- (firstNs + Scenario.ns(position - 1)))
        }
        #expect(errors.allSatisfy { abs($0) <= 1_000 }, "\(errors.prefix(8))")
        #expect(try scenario.headers().count == 53 && tap.droppedChunks == 0)
        scenario.service.setCapturedAudioTap(nil)
        scenario.cycles(10, delayTicks: 512, stream: scenario.mic)
        #expect(AudioChunkRingTests.drained(tap).isEmpty, "no chunk once the tap is taken away")
    }
}
