import Foundation
import TestSupport
import Testing

@testable import DeskAudio

/// The capture service's lifecycle on a fake backend, with no audio server: which streams it
/// opens for which sources, what reaches the frame handler (decoded, not just counted), and
/// how it handles a dropped stream, a device change, a missing server and a stop from inside
/// the handler.
@Suite(.serialized) struct ServiceLifecycleTests {
    /// Frames and events as the host gets them.
    final class Host: @unchecked Sendable {
        private let lock = NSLock()
        private var frames: [[UInt8]] = []
        private var events: [(LibraryEvent, String)] = []
        /// Called inside the frame handler with the frame's index; its result is recorded.
        var insideHandler: ((Int) -> Int32?)?
        private var statuses: [Int32] = []

        init(_ service: AudioService) {
            service.setFrameHandler { [self] bytes in
                let index = lock.withLock {
                    frames.append(Array(bytes))
                    return frames.count - 1
                }
                if let status = insideHandler?(index) { lock.withLock { statuses.append(status) } }
            }
            service.notices.setEventHandler { [self] event, detail in lock.withLock { events.append((event, detail)) } }
        }

        var frameCount: Int { lock.withLock { frames.count } }
        /// What the calls made inside the handler returned.
        var statusesInsideHandler: [Int32] { lock.withLock { statuses } }
        var eventList: [(LibraryEvent, String)] { lock.withLock { events } }
        func headers() throws -> [AudioFrameHeader] {
            try lock.withLock { frames }.map { bytes in try bytes.withUnsafeBytes { try AudioFrameParser.parse($0).header } }
        }

        /// The frames decoded in order, interleaved stereo.
        func decoded() throws -> [Float] {
            let receiver = try FrameReceiver()
            var pcm = [Float](repeating: 0, count: 5280 * 2)
            var all: [Float] = []
            for bytes in lock.withLock({ frames }) {
                let count = try bytes.withUnsafeBytes { frame in
                    try pcm.withUnsafeMutableBufferPointer { try receiver.receive(frame, into: $0) }
                }
                all += pcm[0..<count * 2]
            }
            return all
        }
    }

    static let sinks = [
        CaptureDevice(kind: .sink, name: "speakers", description: "Speakers", isDefault: true),
        CaptureDevice(kind: .sink, name: "headset", description: "Headset", isDefault: false),
    ]

    @Test func eachSourceGetsAStreamAndTheirAudioIsMixed() throws {
        let backend = FakeBackend(devices: ServiceLifecycleTests.sinks)
        let service = AudioService(backends: BackendSet(backends: [backend]))
        let host = Host(service)
        try service.enable(mic: false, app: true)
        #expect(backend.runningStreams.map(\.target) == [.defaultSinkMonitor])
        backend.runningStreams[0].play(frequency: 440, amplitude: 0.3, frames: 50)
        #expect(waitUntil(seconds: 2) { host.frameCount == 50 })

        try service.enable(mic: true, app: true)
        #expect(backend.runningStreams.map(\.target) == [.defaultSinkMonitor, .defaultSource], "app kept, mic added")
        let (app, mic) = (backend.runningStreams[0], backend.runningStreams[1])
        for _ in 0..<50 {  // in step, as two servers' threads deliver
            app.play(frequency: 440, amplitude: 0.3, frames: 1)
            mic.play(frequency: 1500, amplitude: 0.3, frames: 1)
        }
        #expect(waitUntil(seconds: 2) { host.frameCount == 100 })
        try service.enable(mic: false, app: false)
        #expect(backend.runningStreams.isEmpty, "every stream stopped")

        let headers = try host.headers()
        #expect(headers.map(\.sequence) == Array(0..<100))
        #expect(headers[0..<50].allSatisfy { $0.flags.subtracting(.afterGap) == .app })
        #expect(headers[60..<100].allSatisfy { $0.flags == [.app, .mic] })
        let decoded = try host.decoded()
        let alone = Array(decoded[(10 * 960)..<(45 * 960)])
        let mixed = Array(decoded[(60 * 960)..<(95 * 960)])
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(alone[...])) - 440) < 5)
        for frequency in [440.0, 1500] {
            let level = SignalAnalysis.toneLevelDecibels(SignalAnalysis.left(mixed[...]), frequency: frequency)
            #expect(abs(level - 20 * log10(0.3 / 2.0.squareRoot())) < 1, "\(frequency) Hz in the mix at \(level) dBFS")
        }
    }

    /// Muting the host turns a whole-sink capture into every app but this process, kept off
    /// the speakers; with apps chosen it keeps the choice; unmuting gives back the plain target.
    @Test func muteHostCombinesWithTheChoiceOfAppsAndSwitchesARunningCapture() throws {
        let backend = FakeBackend(devices: ServiceLifecycleTests.sinks)
        let service = AudioService(backends: BackendSet(backends: [backend]))
        try service.enable(mic: false, app: true)
        try service.setMuteHost(true)
        #expect(backend.runningStreams.map(\.target) == [.applications(.everyApp(mutesHost: true))])
        try service.setApps(AppSelection(mode: .only, names: ["firefox"]))
        #expect(
            backend.runningStreams.map(\.target)
                == [.applications(AppSelection(mode: .only, names: ["firefox"], mutesHost: true))])
        try service.setMuteHost(false)
        #expect(backend.runningStreams.map(\.target) == [.applications(AppSelection(mode: .only, names: ["firefox"]))])
        try service.setApps(nil)
        #expect(backend.runningStreams.map(\.target) == [.defaultSinkMonitor])
        #expect(backend.streams.count == 5, "each change reopened app audio once")
        try service.enable(mic: false, app: false)
    }

    @Test func aDroppedStreamIsReopenedAndTheGapFlagged() throws {
        let backend = FakeBackend()
        let service = AudioService(backends: BackendSet(backends: [backend]))
        let host = Host(service)
        try service.enable(mic: false, app: true)
        backend.runningStreams[0].play(frequency: 440, amplitude: 0.3, frames: 10)
        #expect(waitUntil(seconds: 2) { host.frameCount == 10 })
        backend.streams[0].fail()
        #expect(waitUntil(seconds: 2) { backend.streams.count == 2 }, "reopened within the supervisor's period")
        #expect(backend.streams[0].isStopped && !backend.streams[1].isStopped)
        backend.streams[1].play(frequency: 440, amplitude: 0.3, frames: 10)
        #expect(waitUntil(seconds: 2) { host.frameCount == 20 })
        try service.enable(mic: false, app: false)
        let headers = try host.headers()
        #expect(headers[10].flags.contains(.afterGap), "the first frame after the outage is flagged")
        #expect(headers[10].sampleClock > headers[9].sampleClock + 480 || headers[10].sampleClock == headers[9].sampleClock + 480)
        #expect(waitUntil(seconds: 1) { host.eventList.map(\.0) == [.connected, .disconnected, .connected] })
    }

    @Test func stallPatienceIs2sThen1sThenDoublesTo16sAndAudioResetsIt() {
        var watch = StallWatch()
        watch.restart(count: 5, at: 0)
        var now: UInt64 = 0
        var patience: [UInt64] = []
        for _ in 0..<7 {
            let waited = now
            while !watch.isStalled(count: 5, at: now) { now += 100_000_000 }
            patience.append((now - waited) / 100_000_000)
            watch.restart(count: 5, at: now)
        }
        #expect(patience == [20, 10, 20, 40, 80, 160, 160], "tenths of a second")
        let stalledOnAudio = watch.isStalled(count: 6, at: now + 1_000_000_000)
        #expect(!stalledOnAudio, "audio came")
        #expect(watch.stallsInARow == 0 && watch.patienceNs == 2_000_000_000)
    }

    @Test func noServerIsAnErrorThatLeavesNothingRunning() throws {
        let backend = FakeBackend()
        backend.isAnswering = false
        let service = AudioService(backends: BackendSet(backends: [backend]))
        do {
            try service.enable(mic: true, app: true)
            Issue.record("enable succeeded with no server")
        } catch {
            guard case .noServer(let message) = error else { Issue.record("not noServer: \(error)"); return }
            #expect(message.contains("fake pipewire is off"))
        }
        #expect(backend.streams.isEmpty)
        #expect(service.activeBackend == nil)
    }

    @Test func automaticChoiceFallsBackToTheNextBackendWithAServer() throws {
        let pipewire = FakeBackend(kind: .pipewire)
        let pulse = FakeBackend(kind: .pulse)
        pipewire.isAnswering = false
        let service = AudioService(backends: BackendSet(backends: [pipewire, pulse]))
        try service.enable(mic: false, app: true)
        #expect(service.activeBackend == .pulse)
        #expect(pulse.runningStreams.count == 1)
        try service.enable(mic: false, app: false)
        service.setBackend(.pipewire)
        #expect(throws: DeskAudioError.self, "a backend asked for by name is not replaced") {
            try service.enable(mic: false, app: true)
        }
    }

    @Test func choosingADeviceMovesTheRunningSourceAndSaysSo() throws {
        let backend = FakeBackend(devices: ServiceLifecycleTests.sinks)
        let service = AudioService(backends: BackendSet(backends: [backend]))
        let host = Host(service)
        #expect(throws: DeskAudioError.self) { try service.setDevice("nowhere", forMic: false) }
        try service.enable(mic: false, app: true)
        try service.setDevice("headset", forMic: false)
        #expect(backend.runningStreams.map(\.target) == [.sinkMonitor(named: "headset")])
        backend.runningStreams[0].move(to: "speakers.monitor")
        try service.enable(mic: false, app: false)
        try service.enable(mic: false, app: true)
        #expect(backend.runningStreams.map(\.target) == [.sinkMonitor(named: "headset")], "the choice is kept")
        try service.enable(mic: false, app: false)
        #expect(
            waitUntil(seconds: 1) {
                host.eventList.filter { $0.0 == .deviceChanged }.map(\.1)
                    == ["app audio: headset", "app audio: speakers.monitor"]
            }, "\(host.eventList)")
    }

    @Test func twoServicesRunIndependently() throws {
        let backend = FakeBackend()
        let first = AudioService(backends: BackendSet(backends: [backend]))
        let second = AudioService(backends: BackendSet(backends: [backend]))
        let (firstHost, secondHost) = (Host(first), Host(second))
        try second.settings.setBitrate(32_000)
        try first.enable(mic: false, app: true)
        try second.enable(mic: false, app: true)
        // In pieces of at most 0.3 s: a source's ring holds 0.5 s.
        backend.runningStreams[0].play(frequency: 440, amplitude: 0.3, frames: 30)
        backend.runningStreams[1].play(frequency: 1500, amplitude: 0.3, frames: 30)
        #expect(waitUntil(seconds: 2) { secondHost.frameCount == 30 })
        backend.runningStreams[1].play(frequency: 1500, amplitude: 0.3, frames: 30)
        #expect(
            waitUntil(seconds: 2) { firstHost.frameCount == 30 && secondHost.frameCount == 60 },
            "\(firstHost.frameCount) and \(secondHost.frameCount) frames")
        try first.enable(mic: false, app: false)
        #expect(backend.runningStreams.count == 1, "stopping one leaves the other running")
        try second.enable(mic: false, app: false)
        #expect(try firstHost.headers().map(\.sequence) == Array(0..<30))
        #expect(try secondHost.headers().map(\.sequence) == Array(0..<60))
        let firstAudio = try firstHost.decoded()
        let secondAudio = try secondHost.decoded()
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(firstAudio[4800...])) - 440) < 5)
        #expect(abs(SignalAnalysis.dominantFrequency(SignalAnalysis.left(secondAudio[4800...])) - 1500) < 5)
        let firstBytes = try firstHost.headers().dropFirst(5).map { Int($0.payloadLength) }.reduce(0, +) / 25
        let secondBytes = try secondHost.headers().dropFirst(5).map { Int($0.payloadLength) }.reduce(0, +) / 55
        #expect(secondBytes < firstBytes / 2, "32 kbit/s vs 128 kbit/s: \(secondBytes) vs \(firstBytes) bytes a frame")
    }

    @Test func aStopFromInsideTheHandlerIsItsLastCall() throws {
        let backend = FakeBackend()
        let service = AudioService(backends: BackendSet(backends: [backend]))
        let host = Host(service)
        host.insideHandler = { index in
            guard index == 4 else { return nil }
            do {
                try service.enable(mic: true, app: true)
                return 0
            } catch let error as DeskAudioError {
                guard case .wrongThread = error else { return -99 }
            } catch {
                return -98
            }
            do {
                try service.enable(mic: false, app: false)
                return 0
            } catch {
                return -1
            }
        }
        try service.enable(mic: false, app: true)
        backend.runningStreams[0].play(frequency: 440, amplitude: 0.3, frames: 20)
        #expect(waitUntil(seconds: 2) { backend.runningStreams.isEmpty }, "the streams stop after the call")
        #expect(host.statusesInsideHandler == [0], "a start is refused there, the stop succeeds")
        #expect(host.frameCount == 5, "the stopping call was the handler's last")
        // The stop thread takes the streams down first, then forgets the backend.
        #expect(waitUntil(seconds: 2) { service.activeBackend == nil })
    }
}
