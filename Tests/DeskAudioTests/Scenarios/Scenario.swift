import Foundation
import TestSupport

@testable import DeskAudio

/// The whole capture service (`AudioService`, its worker, pipeline and delivery) on a
/// `ScriptedServer` and a virtual clock, stepped by the test: each server event is handed
/// over, then the service runs one round on the test's thread, so every result is exact and
/// a scenario takes milliseconds. The frames come out as a host gets them.
final class Scenario {
    /// Where the virtual clock starts: 1000 s, far from zero.
    static let startNs: UInt64 = 1_000_000_000_000
    static let sinks = [
        CaptureDevice(kind: .sink, name: "speakers", description: "Speakers", isDefault: true),
        CaptureDevice(kind: .source, name: "mic", description: "Microphone", isDefault: true),
    ]

    let clock: VirtualClock
    let path: ScriptedServer.Path
    let server: ScriptedServer
    let service: AudioService
    private let recorder = Recorder()
    /// The graph's position in samples and where its next cycle begins, for PipeWire scripts.
    private(set) var graphTicks: UInt64 = 0
    private var phase: [Int: Int] = [:]

    /// A stopped service on a scripted server of `path`, its clock at `startNs`.
    init(_ path: ScriptedServer.Path, startNs: UInt64 = Scenario.startNs) {
        self.path = path
        clock = VirtualClock(startNs: startNs)
        nextSuperviseNs = startNs + 200_000_000
        server = ScriptedServer(path: path, clock: clock, devices: Scenario.sinks)
        service = AudioService(
            backends: BackendSet(backends: [server]), clock: LibraryClock(virtual: clock), driving: .stepped)
        let recorder = recorder
        service.setFrameHandler { bytes in recorder.withLock { recorder.frames.append(Array(bytes)) } }
        service.notices.setEventHandler { event, detail in recorder.withLock { recorder.events.append((event, detail)) } }
    }

    deinit { try? service.enable(mic: false, app: false) }

    /// The newest running stream recording app audio (the default sink's monitor).
    var app: ScriptedStream { server.runningStreams.last { $0.target.recordsASink }! }
    /// The newest running microphone stream.
    var mic: ScriptedStream { server.runningStreams.last { !$0.target.recordsASink }! }

    /// Nanoseconds `samples` last at 48 kHz, rounded to the nanosecond.
    static func ns(_ samples: Int) -> UInt64 { UInt64((Double(samples) * 1e9 / 48000).rounded()) }

    /// Interleaved stereo: `samples` of a 1 kHz sine at -9 dBFS peak for `stream`, its phase
    /// going on from what that stream was given before (nil: zeros).
    func tone(_ samples: Int, for stream: ScriptedStream, frequency: Double = 1000, amplitude: Float = 0.35) -> [Float] {
        let id = ObjectIdentifier(stream).hashValue
        let start = phase[id, default: 0]
        phase[id] = start + samples
        if silent { return zeros(samples) }
        return SignalAnalysis.sine(frequency: frequency, amplitude: amplitude, frames: samples, startFrame: start)
    }

    /// Interleaved stereo zeros.
    func zeros(_ samples: Int) -> [Float] { [Float](repeating: 0, count: samples * 2) }

    /// The service runs one round: frames what the rings hold, delivers them; and, as its
    /// supervisor thread does every 200 ms, checks its streams whenever the clock passed
    /// another 200 ms.
    func step() {
        service.step()
        while clock.nowNs >= nextSuperviseNs {
            nextSuperviseNs += 200_000_000
            service.supervise()
            service.step()
        }
    }
    private var nextSuperviseNs: UInt64

    /// Nothing reaches the library for `nanoseconds`: the sound plays on, the graph cycles on
    /// (nobody captures it), the clock moves in 10 ms steps with the service's rounds.
    func idle(_ nanoseconds: UInt64) {
        let end = clock.nowNs + nanoseconds
        while clock.nowNs < end {
            clock.set(min(clock.nowNs + 10_000_000, end))
            step()
        }
        let samples = Int(AudioFormat.samples(inNanoseconds: nanoseconds))
        graphTicks += UInt64(samples)
        soundSamples += samples
    }

    /// The server goes away, dropping the app stream, and is back `downNs` later; the
    /// service runs its rounds `upNs` more (time to open the stream again).
    func restartServer(downNs: UInt64, upNs: UInt64) {
        server.isAnswering = false
        app.fail()
        idle(downNs)
        server.isAnswering = true
        idle(upNs)
    }

    /// 10 ms frames of a tone into `stream` (app audio unless given), as the path's server
    /// hands them: 480-sample graph cycles (the quantum the library asks for), or one read of
    /// a 480-sample fragment each.
    func play(_ frames: Int, stream: ScriptedStream? = nil) {
        let stream = stream ?? app
        switch path {
        case .pipeWire: cycles(frames, quantum: 480, stream: stream)
        case .pulseAudio: pulseReads(frames, stream: stream)
        case .pipeWirePulse: arrivalReads(frames, stream: stream)
        }
    }

    /// `frames` 10 ms frames of exact zeros, as `play` hands a tone.
    func silence(_ frames: Int, stream: ScriptedStream? = nil) {
        let stream = stream ?? app
        silent = true
        defer { silent = false }
        play(frames, stream: stream)
    }
    private var silent = false

    /// When the sound's sample `position` sounded on this path (a monitor's graph buffer is
    /// a 480-sample quantum behind its cycle's time).
    func soundLineNs(_ position: UInt64) -> UInt64 {
        let start = path == .pipeWire ? Scenario.startNs - Scenario.ns(480) : Scenario.startNs
        return start + soundShiftNs + Scenario.ns(Int(position))
    }

    /// Each frame's capture time less when its sample clock's sample sounded
    /// (`soundLineNs`): across a gap too, the sample clock moves on by the outage.
    func timeErrorsBySampleClock() throws -> [Int64] {
        try headers().map { Int64(bitPattern: $0.captureTimeNs &- soundLineNs($0.sampleClock)) }
    }

    /// PipeWire: `count` graph cycles of `quantum` samples, the clock moving on with them; in
    /// each, `stream` (app audio unless given) gets `content` (a tone unless given), with the
    /// device `delayTicks` behind, and the service runs a round.
    func cycles(
        _ count: Int, quantum: Int = 256, delayTicks: Int64 = 0, stream: ScriptedStream? = nil,
        content: ((ScriptedStream, Int) -> [Float])? = nil
    ) {
        let stream = stream ?? app
        for _ in 0..<count {
            let samples = content?(stream, quantum) ?? tone(quantum, for: stream)
            stream.pipeWireBuffer(
                samples, nowNs: graphTimeNs, ticks: graphTicks, delayTicks: delayTicks, durationTicks: UInt64(quantum))
            graphTicks += UInt64(quantum)
            clock.set(graphTimeNs)
            step()
        }
    }

    /// PipeWire: the graph moves on `count` cycles of `quantum` without the stream's thread
    /// running (their audio is gone); the sound played in them is lost too.
    func missCycles(_ count: Int, quantum: Int = 256, stream: ScriptedStream? = nil) {
        let stream = stream ?? app
        _ = tone(count * quantum, for: stream)
        graphTicks += UInt64(count * quantum)
        clock.set(graphTimeNs)
    }

    /// PipeWire: the graph and the clock move on `samples` with nothing handed over (the
    /// script hands its own buffers).
    func advanceGraph(_ samples: Int) {
        graphTicks += UInt64(samples)
        clock.set(graphTimeNs)
    }

    /// PulseAudio paths: samples per channel of sound handed to the stream so far, and how
    /// much later than the start plus their position they sounded (a graph that skipped a
    /// cycle moves the sound after it on).
    private(set) var soundSamples = 0
    var soundShiftNs: UInt64 = 0
    private var waiting: [[Float]] = []

    /// When the sound's sample `position` sounded.
    func soundTimeNs(_ position: Int) -> UInt64 { Scenario.startNs + soundShiftNs + Scenario.ns(position) }

    /// Plain PulseAudio: `count` reads, each when one more fragment of `fragment` samples has
    /// sounded (the clock set to then), of all the fragments waiting; the read at index `i`
    /// comes with a timing mark when `marks(i)`, placing the stream's read position where it
    /// sounded. What the library holds back stays waiting for the next read.
    func pulseReads(
        _ count: Int, fragment: Int = 480, stream: ScriptedStream? = nil, marks: (Int) -> Bool = { $0 % 10 == 0 }
    ) {
        let stream = stream ?? app
        if stream.soundOrigin == nil { stream.soundOrigin = soundSamples }
        for index in 0..<count {
            waiting.append(tone(fragment, for: stream))
            soundSamples += fragment
            clock.set(soundTimeNs(soundSamples))
            let position = Int(stream.pulseStreamPosition)
            let mark = marks(index)
                ? ClockEstimator.Line(
                    position: Int64(position), timeNs: Double(soundTimeNs(position + (stream.soundOrigin ?? 0))),
                    nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample) : nil
            if stream.pulseRead(waiting, mark: mark) { waiting.removeAll() }
            step()
        }
    }

    /// pipewire-pulse: `count` reads of one fragment of `fragment` samples each, made
    /// `lateNs(i)` after its last sample sounded (an arrival is never early).
    func arrivalReads(
        _ count: Int, fragment: Int = 480, stream: ScriptedStream? = nil, lateNs: (Int) -> UInt64 = { _ in 0 },
        timing: ((Int) -> PulseTimingUpdate?)? = nil
    ) {
        let stream = stream ?? app
        for index in 0..<count {
            let samples = tone(fragment, for: stream)
            soundSamples += fragment
            clock.set(soundTimeNs(soundSamples) + lateNs(index))
            stream.arrivalRead([samples], timing: timing?(index))
            step()
        }
    }

    /// pipewire-pulse: a reading thread that was held up reads `fragments` at once, `lateNs`
    /// after the last of them sounded.
    func arrivalBurst(_ fragments: Int, fragment: Int = 480, lateNs: UInt64) {
        let stream = app
        let samples = (0..<fragments).map { _ in tone(fragment, for: stream) }
        soundSamples += fragments * fragment
        clock.set(soundTimeNs(soundSamples) + lateNs)
        stream.arrivalRead(samples)
        step()
    }

    /// The graph clock's time of its position now: cycles run on the virtual clock from the start.
    var graphTimeNs: UInt64 { Scenario.startNs + Scenario.ns(Int(graphTicks)) }

    /// The frames the host got so far, parsed.
    func headers() throws -> [AudioFrameHeader] {
        try recorder.withLock { recorder.frames }.map { bytes in
            try bytes.withUnsafeBytes { try AudioFrameParser.parse($0).header }
        }
    }

    /// The frames decoded in order, interleaved stereo.
    func decoded() throws -> [Float] {
        let receiver = try FrameReceiver()
        var pcm = [Float](repeating: 0, count: 5760 * 2)
        var all: [Float] = []
        for bytes in recorder.withLock({ recorder.frames }) {
            let count = try bytes.withUnsafeBytes { frame in
                try pcm.withUnsafeMutableBufferPointer { try receiver.receive(frame, into: $0) }
            }
            all += pcm[0..<count * 2]
        }
        return all
    }

    /// Samples the decoder's output lags the capture by: restricted low-delay Opus's look-ahead.
    static let codecDelaySamples = 120

    /// The stretches of the decoded left channel quieter than -40 dBFS (|x| < 0.01) for at
    /// least 1 ms, in samples of the capture (the codec's delay taken off, its first
    /// look-ahead of silence left out; two less than 0.5 ms apart, the codec's ringing at a
    /// frame's edge between them, are one): where the audio has gaps.
    func quietStretches() throws -> [Range<Int>] {
        let left = SignalAnalysis.left(try decoded()[...])
        var stretches: [Range<Int>] = []
        var start: Int?
        for index in left.indices {
            if abs(left[index]) < 0.01 {
                if start == nil { start = index }
            } else if let begun = start {
                if let last = stretches.last, begun - last.upperBound < 24, index - begun >= 8 {
                    stretches[stretches.count - 1] = last.lowerBound..<index
                } else if index - begun >= 48 {
                    stretches.append(begun..<index)
                }
                start = nil
            }
        }
        if let begun = start, left.count - begun >= 48 { stretches.append(begun..<left.count) }
        let delay = Scenario.codecDelaySamples
        return stretches.filter { $0.lowerBound > 0 }.map { ($0.lowerBound - delay)..<($0.upperBound - delay) }
    }

    /// The events the host got so far.
    var events: [(LibraryEvent, String)] { recorder.withLock { recorder.events } }

    /// Each frame's capture time less `expected(frame index in the list)`, in ns.
    func timeErrors(_ expected: (Int) -> UInt64) throws -> [Int64] {
        try headers().enumerated().map { Int64(bitPattern: $1.captureTimeNs &- expected($0)) }
    }

    private final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        var frames: [[UInt8]] = []
        var events: [(LibraryEvent, String)] = []
        func withLock<T>(_ body: () -> T) -> T { lock.withLock(body) }
    }
}
