import Glibc

/// What a pipewire-pulse record stream's last timing update (`pa_timing_info`) says of the
/// path to it: the source's latency and the transport, in µs, and when the update was made.
struct PulseTimingUpdate: Sendable {
    var sourceUsec: UInt64
    var transportUsec: UInt64
    var stamp: timeval
}

/// Places the reads of one PulseAudio record stream on the timeline and writes them into its
/// feed, fragment by fragment: on plain PulseAudio from the server's timing marks
/// (`PulseRecordTiming`), on pipewire-pulse worked back from arrivals. The one place the
/// PulseAudio backend's times are decided; its main loop only translates libpulse's answers
/// into the calls below. Main loop thread only; a value type that allocates nothing.
struct PulseReadTiming {
    /// Samples per channel read so far (holes included): the stream position of the next.
    private(set) var streamPosition: Int64 = 0
    // The time of the read's first sample, until its first fragment reports it.
    private var pendingTimeNs: Int64?
    private var source = StreamClock.Source.serverClock
    private let channels: Int
    // pipewire-pulse: the transport latency of its timing updates, less the stalls in them.
    private var transportFloor = PulseTransportFloor()
    /// What the server handed it, when DESKAUDIO_TRACE asks for a trace.
    let trace: TimingTrace?

    /// Timing for a stream of `channels` float channels, traced into `trace` if given.
    init(channels: Int, trace: TimingTrace? = nil) {
        self.channels = max(channels, 1)
        self.trace = trace
    }

    /// Plain PulseAudio, at a read with `readableBytes` waiting: stamps it from `mark` (the
    /// server's newest, not yet used), if any. False: hold the read back, since no mark has
    /// come yet (`hasMarked`) and less than `TimingPolicy.pulseFirstMarkHoldSamples` waits
    /// (docs/reliability.md, R-PULSE-FIRST-MARK).
    mutating func beginServerClockRead(
        mark: ClockEstimator.Line?, hasMarked: Bool, readableBytes: Int, nowNs: UInt64 = 0
    ) -> Bool {
        trace?.note(.pulseRead(mark: mark, hasMarked: hasMarked, readable: readableBytes, nowNs: nowNs))
        source = .serverClock
        pendingTimeNs = nil
        if let mark {
            pendingTimeNs = Int64(mark.timeNs(ofPosition: streamPosition))
            return true
        }
        let holdBytes = TimingPolicy.standard.pulseFirstMarkHoldSamples * channels * MemoryLayout<Float>.size
        return hasMarked || readableBytes >= holdBytes
    }

    /// pipewire-pulse, at a read at `nowNs` with `readableBytes` waiting: the newest sample
    /// arrived now, after the source's latency and the transport (`timing`, the stream's last
    /// timing update, if any; its transport as `PulseTransportFloor` takes it), so the first
    /// is the buffer's length older. An arrival is never early, only late (`ArrivalEnvelope`
    /// keeps the earliest); the stream is read in fragments of `readSamples`.
    mutating func beginArrivalRead(nowNs: UInt64, readableBytes: Int, timing: PulseTimingUpdate?, readSamples: Int) {
        trace?.note(.arrivalRead(nowNs: nowNs, readable: readableBytes, timing: timing))
        let pathNs = timing.map { update in
            (update.sourceUsec + transportFloor.transportUsec(stamp: update.stamp, reportedUsec: update.transportUsec)) * 1000
        } ?? 0
        let bufferedSamples = UInt64(max(readableBytes, 0)) / UInt64(MemoryLayout<Float>.size * channels)
        pendingTimeNs = Int64(bitPattern: nowNs &- MonotonicClock.nanoseconds(ofSamples: bufferedSamples) &- pathNs)
        source = .arrival(readSamples: readSamples, arrivedAtNs: nowNs)
    }

    /// A fragment of the read: `samples`, or a hole of `floats` (nil): the server had nothing
    /// there, and silence takes its place, counted as skipped (`SourceFeed.writeSkipped`), so
    /// the audio after it keeps its place on the timeline (R-PULSE-HOLE). The read's first
    /// fragment reports the read's time.
    mutating func take(_ samples: UnsafeBufferPointer<Float>?, floats: Int, into feed: SourceFeed) {
        let length = floats / channels
        streamPosition += Int64(length)
        if let trace {
            let (checksum, zero) = samples.map(TimingTrace.digest) ?? (0, true)
            trace.note(.fragment(floats: floats, checksum: checksum, zero: zero, hole: samples == nil))
        }
        let time = pendingTimeNs.flatMap { $0 > 0 ? UInt64($0) : nil }
        pendingTimeNs = nil
        if let samples {
            feed.write(samples, firstSampleTimeNs: time, timeSource: source)
        } else {
            feed.writeSkipped(samples: length, firstSampleTimeNs: time, timeSource: source)
        }
    }
}
