import Foundation
import TestSupport

@testable import DeskAudio

/// A backend with no server behind it, for the service's lifecycle in unit tests: it records
/// the streams the service opens, and the test plays audio into them, fails them, or moves
/// them, as a server would.
final class FakeBackend: TestServerAnswers, @unchecked Sendable {
    let kind: AudioBackend
    let serverName: String
    private let lock = NSLock()
    private var opened: [FakeStream] = []
    private var answering = true
    private var deviceList: [CaptureDevice] = []

    init(kind: AudioBackend = .pipewire, devices: [CaptureDevice] = []) {
        self.kind = kind
        serverName = "fake \(kind.rawValue)"
        deviceList = devices
    }

    /// False: every call fails as if no server ran.
    var isAnswering: Bool {
        get { lock.withLock { answering } }
        set { lock.withLock { answering = newValue } }
    }

    /// Every stream opened so far, oldest first.
    var streams: [FakeStream] { lock.withLock { opened } }

    /// The streams opened and not stopped.
    var runningStreams: [FakeStream] { streams.filter { !$0.isStopped } }

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, options: StreamOptions)
        throws(DeskAudioError) -> CaptureStream
    {
        guard isAnswering else { throw .noServer("\(serverName) is off") }
        if let name = target.deviceName, !lock.withLock({ deviceList.contains { $0.name == name } }) {
            throw .noDevice("\(serverName) has no device named \(name)")
        }
        let stream = FakeStream(target: target, feed: feed, wake: wake, linkingItself: options.linkingItself)
        lock.withLock { opened.append(stream) }
        return stream
    }

    var listedDevices: [CaptureDevice] { lock.withLock { deviceList } }
}

/// What a test's backend answers besides its streams: the devices it lists, no playback
/// streams, an empty server report; every call fails while it does not answer.
protocol TestServerAnswers: CaptureBackend {
    /// False: every call fails as if no server ran.
    var isAnswering: Bool { get }
    /// The devices it lists.
    var listedDevices: [CaptureDevice] { get }
}

extension TestServerAnswers {
    func devices() throws(DeskAudioError) -> [CaptureDevice] {
        guard isAnswering else { throw .noServer("\(serverName) is off") }
        return listedDevices
    }

    func playbackStreams() throws(DeskAudioError) -> [PlaybackStream] {
        guard isAnswering else { throw .noServer("\(serverName) is off") }
        return []
    }

    func serverReport() throws(DeskAudioError) -> ServerReport {
        guard isAnswering else { throw .noServer("\(serverName) is off") }
        return ServerReport(server: serverName, defaultSink: nil, defaultSource: nil, defaultSourceIsMonitor: nil, playing: [])
    }
}

/// One stream a FakeBackend opened.
final class FakeStream: CaptureStream, @unchecked Sendable {
    let target: CaptureTarget
    /// Whether the service asked the backend to link the device itself.
    let linkingItself: Bool
    private let feed: SourceFeed
    private let wake: WakeSignal
    private let lock = NSLock()
    private var stopped = false
    private var failed = false
    private var framesPlayed = 0

    init(target: CaptureTarget, feed: SourceFeed, wake: WakeSignal, linkingItself: Bool) {
        self.target = target
        self.linkingItself = linkingItself
        self.feed = feed
        self.wake = wake
    }

    var isStopped: Bool { lock.withLock { stopped } }

    var hasFailed: Bool { lock.withLock { failed } }

    func stop() { lock.withLock { stopped = true } }

    /// The server drops the stream.
    func fail() { lock.withLock { failed = true } }

    /// The server moved the stream to `device` (its default changed).
    func move(to device: String) { feed.reportDeviceChange(to: device) }

    /// Writes `frames` 10 ms frames of a sine into the feed, as the server's thread would,
    /// continuing the phase of what this stream played before.
    func play(frequency: Double, amplitude: Float, frames: Int) {
        let start = lock.withLock {
            defer { framesPlayed += frames }
            return framesPlayed
        }
        let samples = SignalAnalysis.sine(
            frequency: frequency, amplitude: amplitude, frames: frames * AudioFormat.frameSamples,
            startFrame: start * AudioFormat.frameSamples)
        samples.withUnsafeBufferPointer { feed.write($0) }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }
}
