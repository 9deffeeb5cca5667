import Foundation

@testable import DeskAudio

/// An audio server played from a script on a virtual clock: the backend a scenario test gives
/// the whole service. Its streams hand the library what a real server's would (samples and
/// the server's timing reports, in the structs each backend translates them into) through the
/// same timing code the real backends use (`PipeWireCycleTiming`, `PulseReadTiming`), so a
/// scenario asserts the library's exact answer to a server's behaviour. Test thread only.
final class ScriptedServer: TestServerAnswers, @unchecked Sendable {
    /// Which server, and so which of the library's timing paths its streams take.
    enum Path: Sendable {
        /// Native PipeWire: graph cycles with `pw_time`.
        case pipeWire
        /// Plain PulseAudio: reads placed by the server's timing snapshots.
        case pulseAudio
        /// pipewire-pulse: reads placed from their arrival.
        case pipeWirePulse
    }

    let path: Path
    let kind: AudioBackend
    let serverName: String
    let clock: VirtualClock
    /// False: every call fails as if no server ran (a restart, a server that is gone).
    var isAnswering = true
    /// The devices it lists.
    var deviceList: [CaptureDevice]
    /// Every stream opened so far, oldest first.
    private(set) var streams: [ScriptedStream] = []

    init(path: Path, clock: VirtualClock, devices: [CaptureDevice]) {
        self.path = path
        self.clock = clock
        kind = path == .pipeWire ? .pipewire : .pulse
        serverName = "scripted \(path)"
        deviceList = devices
    }

    /// The streams opened and not stopped.
    var runningStreams: [ScriptedStream] { streams.filter { !$0.isStopped } }

    func openStream(_ target: CaptureTarget, into feed: SourceFeed, wake: WakeSignal, options: StreamOptions)
        throws(DeskAudioError) -> CaptureStream
    {
        guard isAnswering else { throw .noServer("\(serverName) is off") }
        if let name = target.deviceName, !deviceList.contains(where: { $0.name == name }) {
            throw .noDevice("\(serverName) has no device named \(name)")
        }
        let stream = ScriptedStream(
            path: path, target: target, feed: feed, wake: wake, clock: clock, readSamples: options.periodSamples,
            linkingItself: options.linkingItself)
        streams.append(stream)
        return stream
    }

    var listedDevices: [CaptureDevice] { deviceList }
}

/// One stream of a `ScriptedServer`: the test hands it buffers as the server's thread would.
final class ScriptedStream: CaptureStream, @unchecked Sendable {
    let path: ScriptedServer.Path
    let target: CaptureTarget
    let feed: SourceFeed
    private let wake: WakeSignal
    private let clock: VirtualClock
    /// The fragment length the capture asked for (the PulseAudio paths' reads).
    let readSamples: Int
    /// Whether the capture asked to link the device itself (the session manager did not).
    let linkingItself: Bool
    /// Where in the scenario's sound this stream's first sample is (set by the scenario).
    var soundOrigin: Int?
    private let cycleTiming: PipeWireCycleTiming
    private var readTiming: PulseReadTiming
    private(set) var isStopped = false
    private var failed = false
    /// Whether plain PulseAudio's first timing mark has come.
    private(set) var hasMarked = false

    init(
        path: ScriptedServer.Path, target: CaptureTarget, feed: SourceFeed, wake: WakeSignal, clock: VirtualClock,
        readSamples: Int, linkingItself: Bool
    ) {
        self.linkingItself = linkingItself
        self.path = path
        self.target = target
        self.feed = feed
        self.wake = wake
        self.clock = clock
        self.readSamples = readSamples
        cycleTiming = PipeWireCycleTiming(readsMonitor: target.recordsASink)
        readTiming = PulseReadTiming(channels: feed.ring.channels)
    }

    var hasFailed: Bool { failed }

    func stop() { isStopped = true }

    /// The server drops the stream (it restarts, or goes away).
    func fail() { failed = true }

    /// The stream's default moved to `device`.
    func move(to device: String) { feed.reportDeviceChange(to: device) }

    /// PipeWire: the graph cycle at position `ticks` (48 kHz), begun at `nowNs`, hands this
    /// stream `samples` (interleaved, its channels); the device's samples are `delayTicks`
    /// older; the cycle lasts `durationTicks` (nil: the buffer's length).
    func pipeWireBuffer(_ samples: [Float], nowNs: UInt64, ticks: UInt64, delayTicks: Int64 = 0, durationTicks: UInt64? = nil) {
        pipeWireBuffer(
            samples,
            report: PipeWireCycleReport(
                nowNs: Int64(nowNs), delayTicks: delayTicks, ticks: ticks, rate: (1, UInt32(AudioFormat.sampleRate)),
                cycleDurationTicks: durationTicks))
    }

    /// PipeWire: a buffer of `samples` with the server's `report` as it gave it.
    func pipeWireBuffer(_ samples: [Float], report: PipeWireCycleReport) {
        precondition(path == .pipeWire && !isStopped)
        samples.withUnsafeBufferPointer { cycleTiming.take($0, report: report, into: feed) }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }

    /// A fragment of a PulseAudio read: samples, or a hole of `floats`.
    enum Fragment {
        case samples([Float])
        case hole(floats: Int)
    }

    /// Plain PulseAudio, as a trace recorded it: a read at the clock's now with `mark`,
    /// `readable` bytes waiting; `fragments` are what the server's buffer hands a read then
    /// (called only when the library reads). Returns whether it read.
    @discardableResult
    func replayedPulseRead(mark: ClockEstimator.Line?, marked: Bool, readable: Int, fragments: () -> [Fragment]) -> Bool {
        precondition(path == .pulseAudio && !isStopped)
        guard readTiming.beginServerClockRead(mark: mark, hasMarked: marked, readableBytes: readable) else { return false }
        take(fragments())
        return true
    }

    /// pipewire-pulse, as a trace recorded it.
    func replayedArrivalRead(readable: Int, timing: PulseTimingUpdate?, fragments: [Fragment]) {
        precondition(path == .pipeWirePulse && !isStopped)
        readTiming.beginArrivalRead(nowNs: clock.nowNs, readableBytes: readable, timing: timing, readSamples: readSamples)
        take(fragments)
    }

    private func take(_ fragments: [Fragment]) {
        for fragment in fragments {
            switch fragment {
            case .samples(let samples): samples.withUnsafeBufferPointer { readTiming.take($0, floats: $0.count, into: feed) }
            case .hole(let floats): readTiming.take(nil, floats: floats, into: feed)
            }
        }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }

    /// Plain PulseAudio: a read of `fragments` (nil: a hole of that many floats) with
    /// `mark`, the server's newest timing snapshot if one came since the last read. False:
    /// the library held the read back (no mark yet), and the server keeps it.
    @discardableResult
    func pulseRead(_ fragments: [[Float]?], holeFloats: Int = 0, mark: ClockEstimator.Line?) -> Bool {
        precondition(path == .pulseAudio && !isStopped)
        if mark != nil { hasMarked = true }
        let readable = fragments.reduce(0) { $0 + ($1?.count ?? holeFloats) } * MemoryLayout<Float>.size
        guard readTiming.beginServerClockRead(mark: mark, hasMarked: hasMarked, readableBytes: readable) else {
            return false
        }
        takeFragments(fragments, holeFloats: holeFloats)
        return true
    }

    /// pipewire-pulse: a read at the virtual clock's now of `fragments`, with the stream's
    /// last timing update (none: nil).
    func arrivalRead(_ fragments: [[Float]], timing: PulseTimingUpdate? = nil) {
        precondition(path == .pipeWirePulse && !isStopped)
        let readable = fragments.reduce(0) { $0 + $1.count } * MemoryLayout<Float>.size
        readTiming.beginArrivalRead(nowNs: clock.nowNs, readableBytes: readable, timing: timing, readSamples: readSamples)
        takeFragments(fragments, holeFloats: 0)
    }

    /// Where plain PulseAudio's next read starts: samples per channel read so far.
    var pulseStreamPosition: Int64 { readTiming.streamPosition }

    private func takeFragments(_ fragments: [[Float]?], holeFloats: Int) {
        for fragment in fragments {
            if let fragment {
                fragment.withUnsafeBufferPointer { readTiming.take($0, floats: $0.count, into: feed) }
            } else {
                readTiming.take(nil, floats: holeFloats, into: feed)
            }
        }
        wake.signal(ringHolding: feed.ring.availableFloats)
    }
}
