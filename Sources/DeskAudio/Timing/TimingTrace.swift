import Glibc
import Synchronization

/// What a real server handed one capture stream's timing (`PipeWireCycleTiming`,
/// `PulseReadTiming`), recorded for replay on a virtual clock (Tests/Vectors/traces, the
/// scenario lane's `TraceReplay`): each report the server gave, with the length, a checksum
/// and the silence of the samples it came with, and at the end what the library made of it
/// (the stream's counts). On when DESKAUDIO_TRACE names a directory (a debug setting, read at
/// each stream's start); one file per stream, written when it stops. Records go into storage
/// allocated at the start, the last `capacity` kept (about a minute of 256-sample cycles; a
/// longer stream's trace is its end, marked `# from record N`), so recording allocates
/// nothing per buffer; the data thread only appends.
final class TimingTrace {
    /// Records kept at most.
    static let capacity = 16_384

    /// One line of the trace, as the data thread notes it.
    enum Record {
        /// A PipeWire buffer: its report, samples per channel, checksum, all zeros, and its
        /// first two samples of the first channel (a tone's phase, for a look at continuity).
        case pipeWire(PipeWireCycleReport, samples: Int, checksum: UInt64, zero: Bool, head: (Float, Float))
        /// A plain PulseAudio read: the mark taken with it (nil: none), whether one had come, bytes readable, when.
        case pulseRead(mark: ClockEstimator.Line?, hasMarked: Bool, readable: Int, nowNs: UInt64)
        /// A pipewire-pulse read: when, bytes readable, the stream's last timing update.
        case arrivalRead(nowNs: UInt64, readable: Int, timing: PulseTimingUpdate?)
        /// A fragment of a PulseAudio read: floats, checksum, all zeros (a hole: `hole`).
        case fragment(floats: Int, checksum: UInt64, zero: Bool, hole: Bool)
    }

    private let path: String
    private let header: String
    private let records: UnsafeMutableBufferPointer<Record>
    private var count = 0
    private static let streams = Atomic<Int>(0)
    // The feed's counts when the stream started (a feed serves stream after stream).
    private let skippedAtStart: UInt64
    private let zeroCyclesAtStart: UInt64

    /// A trace for a stream of `kind` ("pipewire", "pulseaudio", "pipewire-pulse") in the
    /// directory DESKAUDIO_TRACE names, or nil when it names none; the stream opens now, on
    /// a device the library links itself when `linkingItself`.
    static func start(kind: String, feed: SourceFeed, readSamples: Int, readsMonitor: Bool, linkingItself: Bool = false)
        -> TimingTrace?
    {
        guard let directory = getenv("DESKAUDIO_TRACE").map({ String(cString: $0) }), !directory.isEmpty else { return nil }
        let number = streams.add(1, ordering: .relaxed).newValue
        return TimingTrace(
            path: "\(directory)/trace-\(getpid())-\(number)-\(kind).txt",
            header: "# deskaudio timing trace 1\nstream \(kind) channels=\(feed.ring.channels) read=\(readSamples) "
                + "monitor=\(readsMonitor ? 1 : 0) opened=\(LibraryClock.system.nowNs()) linking=\(linkingItself ? 1 : 0)\n",
            feed: feed)
    }

    /// A trace written to `path` (tests; `start` names the file).
    init(path: String, header: String, feed: SourceFeed) {
        self.path = path
        self.header = header
        skippedAtStart = feed.skippedSamples
        zeroCyclesAtStart = feed.zeroCycleCount
        records = .allocate(capacity: Self.capacity)
    }

    deinit {
        records.baseAddress?.deinitialize(count: min(count, Self.capacity))
        records.deallocate()
    }

    /// Data thread: notes `record` (over the oldest once the storage is full).
    func note(_ record: Record) {
        let slot = records.baseAddress! + count % Self.capacity
        if count < Self.capacity { slot.initialize(to: record) } else { slot.pointee = record }
        count += 1
    }

    /// A checksum of `samples` (FNV-1a over their bits) and whether all are zero.
    static func digest(_ samples: UnsafeBufferPointer<Float>) -> (checksum: UInt64, zero: Bool) {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var zero = true
        for sample in samples {
            hash = (hash ^ UInt64(sample.bitPattern)) &* 0x100_0000_01b3
            if sample != 0 { zero = false }
        }
        return (hash, zero)
    }

    /// While no stream writes: writes the file, with what `feed` counted of the stream last.
    func finish(feed: SourceFeed) {
        var text = header
        let first = max(count - Self.capacity, 0)
        // (A trace that starts mid-stream starts at a read or a buffer, never a fragment.)
        var skipping = first > 0
        if first > 0 { text += "# from record \(first)\n" }
        for index in first..<count {
            let record = records[index % Self.capacity]
            if skipping, case .fragment = record { continue }
            skipping = false
            text += Self.line(record) + "\n"
        }
        text += "end skipped=\(feed.skippedSamples - skippedAtStart) zero-cycles=\(feed.zeroCycleCount - zeroCyclesAtStart)\n"
        guard let file = fopen(path, "w") else { return }
        fputs(text, file)
        fclose(file)
    }

    private static func line(_ record: Record) -> String {
        switch record {
        case .pipeWire(let report, let samples, let checksum, let zero, let head):
            return "pw now=\(report.nowNs) delay=\(report.delayTicks) ticks=\(report.ticks) rate=\(report.rate.num)/\(report.rate.denom) "
                + "dur=\(report.cycleDurationTicks.map(String.init) ?? "-") n=\(samples) sum=\(checksum) zero=\(zero ? 1 : 0) "
                + "x0=\(head.0) x1=\(head.1)"
        case .pulseRead(let mark, let hasMarked, let readable, let nowNs):
            let taken = mark.map { "\($0.position):\(Int64($0.timeNs.rounded()))" } ?? "-"
            return "pa now=\(nowNs) mark=\(taken) marked=\(hasMarked ? 1 : 0) readable=\(readable)"
        case .arrivalRead(let nowNs, let readable, let timing):
            let update = timing.map { "\($0.sourceUsec):\($0.transportUsec):\($0.stamp.tv_sec).\($0.stamp.tv_usec)" } ?? "-"
            return "pp now=\(nowNs) readable=\(readable) timing=\(update)"
        case .fragment(let floats, let checksum, let zero, let hole):
            return hole ? "hole n=\(floats)" : "frag n=\(floats) sum=\(checksum) zero=\(zero ? 1 : 0)"
        }
    }
}
