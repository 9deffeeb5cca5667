import Glibc
import Synchronization

/// The viewer's microphone on the host: AudioFrames the host feeds as they arrive from the
/// network become a microphone applications can record from (on PipeWire an `Audio/Source`
/// node of its own; it is a source, never played to a sink, so no capture of app audio hears
/// it). Between the two, a `JitterBuffer` on the server's real-time thread; frames reach it
/// through a `FrameInbox`, so feeding never blocks that thread. `onRecording` is told when the
/// first application starts recording from it (true) and when the last stops (false), on the
/// connection's thread, so the host can ask the viewer to open or close its microphone.
public final class RemoteMicrophone: @unchecked Sendable {
    /// What the jitter buffer has done so far.
    public struct Stats: Equatable, Sendable {
        /// Frames fed and taken (parsed; the inbox had room).
        public var framesFed: UInt64
        /// Frames refused because 640 ms were already waiting (nothing records from it).
        public var framesRefused: UInt64
        /// The jitter buffer's counts.
        public var buffer: JitterBuffer.Counters
        /// The delay it aims at now, ms.
        public var targetDelayMs: Int
        /// True while an application records from it.
        public var isRecorded: Bool
    }

    /// A frame waiting longer than this when the player first takes it is old news: dropped.
    static let staleNs: UInt64 = 500_000_000

    /// The node (source) name applications see.
    public let name: String
    private let description: String
    private let inbox = FrameInbox()
    private let buffer: JitterBuffer
    private let carry: UnsafeMutableBufferPointer<Float>
    private var carried = 0  // floats of `carry` not played yet (from its end)
    private let fed = Atomic<UInt64>(0)
    private let recorded = Atomic<Bool>(false)
    // The jitter buffer's counts, published by the player thread after each render.
    private let published = LockedValue(JitterBuffer.Counters())
    private let target = Atomic<Int>(2)
    private var source: PipeWireRemoteSource?
    private let onRecording: @Sendable (Bool) -> Void

    /// A microphone named `name` (a node name: letters, digits, `_-.`), shown as
    /// `description`; not yet on the server: call `start`.
    public init(name: String, description: String, onRecording: @escaping @Sendable (Bool) -> Void) throws(DeskAudioError) {
        guard !name.isEmpty, name.count <= 64,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) })
        else {
            throw .invalidArgument("remote microphone name \"\(name)\": 1 to 64 of letters, digits, _ - .")
        }
        self.name = name
        self.description = description.isEmpty ? name : description
        self.onRecording = onRecording
        buffer = try JitterBuffer()
        carry = .allocate(capacity: AudioFormat.frameFloats)
        carry.initialize(repeating: 0)
    }

    deinit {
        stop()
        carry.deallocate()
    }

    /// Puts the microphone on the PipeWire server the process's session points at; it is
    /// there once this returns. Throws `.noServer` when no PipeWire daemon answers.
    public func start(timeoutMs: Int = 3000) throws(DeskAudioError) {
        guard source == nil else { return }
        let newSource = PipeWireRemoteSource(
            name: name, description: description,
            render: { [unowned self] output in render(into: output) },
            onRunning: { [unowned self] running in
                guard recorded.exchange(running, ordering: .acquiringAndReleasing) != running else { return }
                onRecording(running)
            })
        try newSource.start(timeoutMs: timeoutMs)
        source = newSource
    }

    /// Takes the microphone off the server; safe to call twice. No `onRecording` call after it
    /// returns.
    public func stop() {
        source?.stop()
        source = nil
    }

    /// Any thread: one AudioFrame as it arrived (now). Throws what
    /// `JitterBuffer.playableFrame` throws (the parser's error, or `.notSupported` for a frame
    /// that is not 10 ms of 48 kHz stereo) and takes nothing; returns false when it was
    /// dropped because 640 ms are already waiting.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer) throws(DeskAudioError) -> Bool {
        _ = try JitterBuffer.playableFrame(bytes)
        guard inbox.put(bytes, arrivalNs: MonotonicClock.nowNs()) else { return false }
        fed.add(1, ordering: .relaxed)
        return true
    }

    /// Counts so far.
    public var stats: Stats {
        Stats(
            framesFed: fed.load(ordering: .relaxed), framesRefused: inbox.refusedFrames,
            buffer: published.withLock { $0 }, targetDelayMs: target.load(ordering: .relaxed) * 10,
            isRecorded: recorded.load(ordering: .acquiring))
    }

    /// The player's real-time thread: fills `output` (interleaved stereo) from the jitter
    /// buffer, 10 ms pulled at a time; what a pull leaves over plays first next time.
    func render(into output: UnsafeMutableBufferPointer<Float>) {
        let now = MonotonicClock.nowNs()
        inbox.drain { frame, arrival in
            guard now &- arrival < RemoteMicrophone.staleNs else { return }
            try? buffer.insert(frame, arrivalNs: arrival)
        }
        var filled = 0
        while filled < output.count {
            if carried == 0 {
                _ = buffer.pull(into: carry, nowNs: now)
                carried = carry.count
            }
            let count = min(carried, output.count - filled)
            let from = carry.count - carried
            UnsafeMutableBufferPointer(rebasing: output[filled..<(filled + count)])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: carry[from..<(from + count)]))
            carried -= count
            filled += count
        }
        target.store(buffer.targetFrames, ordering: .relaxed)
        // A lock the host's stats call may hold: tried, never waited for.
        _ = published.tryWithLock { $0 = buffer.counters }
    }
}
