import Glibc
import Synchronization

/// AudioFrames that arrive from the network played on this machine, through a `JitterBuffer`:
/// as a microphone applications record from (the viewer's microphone on the host: on
/// PipeWire an `Audio/Source` node of its own, on PulseAudio a source remapped from a sink of
/// its own; a source, never played to the sinks app audio is captured from), or on the
/// default sink's speakers (the viewer playing the host's sound: `deskaudio receive`). The
/// buffer lives on the server's thread; frames reach it through a `FrameInbox`, so feeding
/// never blocks that thread. `onRunning`
/// is told when the output starts running (true: for a microphone, the first application
/// started recording from it) and when it stops (the last one stopped), on the connection's
/// thread, so a host can ask the viewer to open or close its microphone.
public final class FramePlayer: Sendable {
    /// Where the frames play.
    public enum Output: Sendable {
        /// A microphone named `name` (a node name: letters, digits, `_-.`), shown as
        /// `description`.
        case microphone(name: String, description: String)
        /// This machine's default sink.
        case speakers
    }

    /// What the jitter buffer has done so far.
    public struct Stats: Equatable, Sendable {
        /// Frames fed and taken (parsed; the inbox had room).
        public var framesFed: UInt64
        /// Frames refused because nothing played the output then (a microphone nobody
        /// records: by the time one does, they are old news), or 640 ms were already waiting.
        public var framesRefused: UInt64
        /// The jitter buffer's counts.
        public var buffer: JitterBuffer.Counters
        /// The delay it aims at now, ms.
        public var targetDelayMs: Int
        /// True while the output runs (for a microphone: while an application records from it).
        public var isRunning: Bool
        /// How long the frames played so far waited between being fed and being played, ms:
        /// the median (0 before any).
        public var delayP50Ms: Int
        /// The same, 99th percentile.
        public var delayP99Ms: Int
        /// Peak level of what was played over the last second (linear, 0...1).
        public var peak: Float
        /// RMS level of the same.
        public var rms: Float
    }

    /// A frame waiting longer than this when the player first takes it is old news: dropped.
    static let staleNs: UInt64 = 500_000_000
    /// A gap this long between two renders means the output was paused.
    static let pauseNs: UInt64 = 200_000_000

    /// Where the frames play.
    public let output: Output
    /// What the output played, as it goes out, if asked for at creation (`tapsPlayedAudio`):
    /// each render's audio and the time its last sample leaves the speakers, for one consumer
    /// (a viewer's echo canceller: `PCMFrameEncoder.pushPlayback`).
    public let playedAudio: AudioChunkRing?
    private let inbox = FrameInbox()
    private let fed = Atomic<UInt64>(0)
    private let running = Atomic<Bool>(false)
    // What the render thread publishes after each render: the jitter buffer's counts and the
    // delay percentiles, its target and the level played.
    private let published = LockedValue((counters: JitterBuffer.Counters(), p50: 0, p99: 0))
    private let target = Atomic<Int>(2)
    private let newStream = Atomic<Bool>(false)
    private let refusedWhileIdle = Atomic<UInt64>(0)
    private let level = PublishedLevel()
    // The stream on the server; its render closure alone holds the playout state.
    private let stream = LockOwned<FrameOutput?>(nil)
    private let onRunning: @Sendable (Bool) -> Void

    /// A player for `output`, whose played audio `playedAudio` hands over if
    /// `tapsPlayedAudio`; not yet on the server: call `start`. Throws `.invalidArgument` for a
    /// bad microphone name.
    public init(
        output: Output, tapsPlayedAudio: Bool = false, onRunning: @escaping @Sendable (Bool) -> Void
    ) throws(DeskAudioError) {
        if case .microphone(let name, _) = output {
            guard !name.isEmpty, name.count <= 64,
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) })
            else {
                throw .invalidArgument("remote microphone name \"\(name)\": 1 to 64 of letters, digits, _ - .")
            }
        }
        self.output = output
        self.onRunning = onRunning
        playedAudio = tapsPlayedAudio ? AudioChunkRing() : nil
    }

    deinit { stop() }

    /// Puts the output on the audio server `backend` names (nil: DESKAUDIO_BACKEND's, else
    /// automatic: PipeWire when its daemon answers, else PulseAudio), as capture chooses. It
    /// is there once this returns. Throws `.noServer` when no server answers, and
    /// `.invalidArgument` for a DESKAUDIO_BACKEND that names none.
    public func start(backend: AudioBackend? = nil, timeoutMs: Int = 3000) throws(DeskAudioError) {
        try stream.withLock { (stream) throws(DeskAudioError) in
            guard stream == nil else { return }
            stream = try makeStream(backend: backend, timeoutMs: timeoutMs)
        }
    }

    /// A stream on the first server that answers, started, rendering from a playout of its own.
    private func makeStream(backend: AudioBackend?, timeoutMs: Int) throws(DeskAudioError) -> FrameOutput {
        let (asMicrophone, name, description) =
            switch output {
            case .microphone(let name, let description): (true, name, description.isEmpty ? name : description)
            case .speakers: (false, "deskaudio-player", "DeskAudio player")
            }
        let playout = try Playout()
        let render: (UnsafeMutableBufferPointer<Float>) -> Void = { [unowned self] output in
            if newStream.exchange(false, ordering: .acquiring) { playout.startNewStream() }
            playout.render(into: output, from: inbox)
            target.store(playout.buffer.targetFrames, ordering: .relaxed)
            // A lock the host's stats call may hold: tried, never waited for.
            _ = published.tryWithLock {
                $0 = (playout.buffer.counters, playout.delays.percentileMs(0.5), playout.delays.percentileMs(0.99))
            }
        }
        let levels = LevelMeter(publishingTo: level)
        let tap = playedAudio
        let measured: RenderRequest = { output, playsAtNs in
            render(output)
            levels.measure(UnsafeBufferPointer(output))
            guard let tap else { return }
            let lastNs = MonotonicClock.nanoseconds(ofSamples: UInt64(max(output.count / AudioFormat.channels - 1, 0)))
            tap.put(UnsafeBufferPointer(output), endTimeNs: playsAtNs &+ lastNs)
        }
        let onRunning: (Bool) -> Void = { [unowned self] isRunning in
            guard running.exchange(isRunning, ordering: .acquiringAndReleasing) != isRunning else { return }
            self.onRunning(isRunning)
        }
        var requested = backend
        if requested == nil { requested = try AudioBackend.fromEnvironment() }
        let candidates = requested.map { [$0] } ?? AudioBackend.automaticOrder
        return try BackendSet.firstAnswering(candidates, serverName: \.serverName) {
            kind throws(DeskAudioError) -> FrameOutput in
            let output: FrameOutput =
                switch kind {
                case .pipewire:
                    PipeWireOutputStream(
                        asMicrophone: asMicrophone, name: name, description: description, render: measured,
                        onRunning: onRunning)
                case .pulse:
                    PulseOutputStream(
                        asMicrophone: asMicrophone, name: name, description: description, render: measured,
                        onRunning: onRunning)
                }
            try output.start(timeoutMs: timeoutMs)
            return output
        }
    }

    /// Takes the output off the server; safe to call twice. No `onRunning` call after it
    /// returns.
    public func stop() {
        stream.withLock { stream in
            stream?.stop()
            stream = nil
        }
    }

    /// Any thread: one AudioFrame as it arrived (now). Throws what
    /// `JitterBuffer.playableFrame` throws (the parser's error, or `.notSupported` for a frame
    /// that is not 10 ms of 48 kHz mono or stereo) and takes nothing; returns false when it was
    /// dropped because nothing plays the output now or 640 ms are already waiting.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(DeskAudioError) -> Bool {
        _ = try JitterBuffer.playableFrame(bytes)
        // Kept while nothing plays them, they would make a backlog with holes where the inbox
        // filled, dropped and concealed when playing starts (docs/reliability.md R-MIC-IDLE).
        guard running.load(ordering: .acquiring) else {
            refusedWhileIdle.add(1, ordering: .relaxed)
            return false
        }
        guard inbox.put(bytes, arrivalNs: LibraryClock.system.nowNs()) else { return false }
        fed.add(1, ordering: .relaxed)
        return true
    }

    /// Any thread: the frames fed from now on are a new stream (another sender, or the same
    /// one started over): what the jitter buffer holds is forgotten before they play.
    public func startNewStream() {
        newStream.store(true, ordering: .releasing)
    }

    /// Counts so far.
    public var stats: Stats {
        let now = published.withLock { $0 }
        return Stats(
            framesFed: fed.load(ordering: .relaxed),
            framesRefused: inbox.refusedFrames + refusedWhileIdle.load(ordering: .relaxed),
            buffer: now.counters, targetDelayMs: target.load(ordering: .relaxed) * 10,
            isRunning: running.load(ordering: .acquiring), delayP50Ms: now.p50, delayP99Ms: now.p99,
            peak: level.peak, rms: level.rms)
    }

}

/// What the render thread alone holds: the jitter buffer, the part of a frame a render left
/// over, and the delays played. Owned by one stream's render closure.
private final class Playout {
    let buffer: JitterBuffer
    private(set) var delays = DelayHistogram()
    private let carry: UnsafeMutableBufferPointer<Float>
    private var carried = 0  // floats of `carry` not played yet (from its end)
    private var lastRenderNs: UInt64 = 0

    init() throws(DeskAudioError) {
        buffer = try JitterBuffer()
        carry = .zeroed(AudioFormat.frameFloats)
    }

    deinit {
        carry.deallocate()
        delays.deallocate()
    }

    /// Forgets what the jitter buffer holds and what a pull left over: a new stream begins.
    func startNewStream() {
        buffer.reset()
        carried = 0
    }

    /// Fills `output` (interleaved stereo) from the jitter buffer, 10 ms pulled at a time,
    /// after taking what waits in `inbox`; what a pull leaves over plays first next time.
    func render(into output: UnsafeMutableBufferPointer<Float>, from inbox: FrameInbox) {
        let now = LibraryClock.system.nowNs()
        // The output was paused (nothing recorded): what the buffer held is old news, and
        // what waits in the inbox plays from the target delay behind the newest.
        if lastRenderNs != 0 && now &- lastRenderNs > FramePlayer.pauseNs {
            buffer.pause()
            carried = 0
        }
        lastRenderNs = now
        inbox.drain { frame, arrival in
            guard now &- arrival < FramePlayer.staleNs else { return }
            try? buffer.insert(frame, arrivalNs: arrival)
        }
        var filled = 0
        while filled < output.count {
            if carried == 0 {
                if case .frame(_, let delayNs) = buffer.pull(into: carry, nowNs: now) { delays.add(delayNs) }
                carried = carry.count
            }
            let count = min(carried, output.count - filled)
            let from = carry.count - carried
            UnsafeMutableBufferPointer(rebasing: output[filled..<(filled + count)])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: carry[from..<(from + count)]))
            carried -= count
            filled += count
        }
    }
}
