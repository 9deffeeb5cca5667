/// What PipeWire tells of one buffer a capture stream takes, translated from its structs by
/// the data thread: `pw_stream_get_time_n`'s `pw_time` and the live graph cycle's duration.
/// `PipeWireCycleTiming` turns it into the feed's writes; a scripted server builds it directly.
struct PipeWireCycleReport: Sendable, Equatable {
    /// When the graph cycle began (`pw_time.now`, CLOCK_MONOTONIC ns); 0 when not known.
    var nowNs: Int64
    /// How far the device's samples are behind `nowNs` (`pw_time.delay + buffered`), in `rate` ticks.
    var delayTicks: Int64
    /// The graph position the stream recorded as it took the buffer in (`pw_time.ticks`).
    var ticks: UInt64
    /// The graph clock's rate (`pw_time.rate`): usually 1/48000 s a tick.
    var rate: (num: UInt32, denom: UInt32)
    /// The live graph cycle's duration in ticks (`spa_io_position.clock.duration`), if known.
    var cycleDurationTicks: UInt64?

    /// A report with no time in it (the stream has no clock yet).
    static let untimed = PipeWireCycleReport(nowNs: 0, delayTicks: 0, ticks: 0, rate: (0, 0), cycleDurationTicks: nil)

    /// True when the server gave a time: buffers can be placed.
    var isTimed: Bool { rate.denom > 0 && nowNs > 0 }

    /// `delayTicks` in nanoseconds (0 when untimed).
    var delayNs: Double { isTimed ? Double(delayTicks) * 1e9 * Double(rate.num) / Double(rate.denom) : 0 }

    static func == (a: PipeWireCycleReport, b: PipeWireCycleReport) -> Bool {
        a.nowNs == b.nowNs && a.delayTicks == b.delayTicks && a.ticks == b.ticks && a.rate.num == b.rate.num
            && a.rate.denom == b.rate.denom && a.cycleDurationTicks == b.cycleDurationTicks
    }
}

/// Places the buffers of one PipeWire capture stream on the timeline and writes them into its
/// feed: each buffer's first sample's time, cycles the stream missed (silence in their place,
/// counted), a buffer handed twice after a stall (`PipeWireSkipHold`), cycles of zeros alone
/// between sound (counted). The one place the native backend's times are decided; the data
/// thread only copies and translates (`PipeWireCycleReport`). Data thread only (or while no
/// stream runs); allocates nothing per buffer.
final class PipeWireCycleTiming {
    /// True for app audio: a monitor carries a graph cycle's audio in the next cycle, so its
    /// samples are one quantum older than the cycle's time.
    let readsMonitor: Bool
    private var cycleWatch = PipeWireCycleWatch()
    private var zeroCycleWatch = PipeWireZeroCycleWatch()
    private let skipHold = PipeWireSkipHold()
    // The graph position of the last timed buffer.
    private var lastTicks: UInt64?
    /// What the server handed it, when DESKAUDIO_TRACE asks for a trace.
    let trace: TimingTrace?

    /// Timing for a stream that reads a sink's monitor (`readsMonitor`) or a source, traced
    /// into `trace` if given.
    init(readsMonitor: Bool, trace: TimingTrace? = nil) {
        self.readsMonitor = readsMonitor
        self.trace = trace
    }

    /// A buffer of interleaved `samples` came with `report`: writes it into `feed`, after
    /// the silence of any cycles missed before it, with its first sample's time.
    func take(_ samples: UnsafeBufferPointer<Float>, report: PipeWireCycleReport, into feed: SourceFeed) {
        let channels = max(feed.ring.channels, 1)
        if let trace {
            let (checksum, zero) = TimingTrace.digest(samples)
            let head = samples.count > channels ? (samples[0], samples[channels]) : (0, 0)
            trace.note(.pipeWire(report, samples: samples.count / channels, checksum: checksum, zero: zero, head: head))
        }
        // The cycle started at `now`; the device's samples are `delay` older. A monitor hands
        // over the sink's previous cycle: one quantum (this buffer's length) older still
        // (docs/capture.md, "Capture times").
        let length = UInt64(samples.count / channels)
        let quantumNs = readsMonitor ? MonotonicClock.nanoseconds(ofSamples: length) : 0
        let firstSampleNs = Double(report.nowNs) - report.delayNs - Double(quantumNs)
        // Cycles missed before this buffer, from the graph position the stream recorded as it
        // took the buffer in, not the live one: a thread stalled between the two would read a
        // later cycle's position for this buffer and put the silence of the cycles missed
        // after it before it. The cycle's duration is the live position's (the same unless
        // the quantum changed during such a stall).
        var skipped = 0
        if report.isTimed {
            skipped = cycleWatch.skippedSamples(
                ticks: report.ticks, durationTicks: report.cycleDurationTicks ?? length, rate: report.rate,
                nowNs: report.nowNs)
        }
        if report.isTimed { feed.reportServerLatency(nanoseconds: Int64(report.delayNs)) }
        let again = report.isTimed && report.ticks == lastTicks
        if report.isTimed { lastTicks = report.ticks }
        feed.countZeroCycles(zeroCycleWatch.take(samples, channels: channels, skipped: skipped, again: again))
        // A position handed again with no skip to settle (a new driver taking the graph over,
        // a new stream's first cycle): audio already handed, or zeros; the first stands
        // (docs/reliability.md, R-PW-DRIVER).
        if again && !skipHold.isHolding { return }
        skipHold.take(
            samples, channels: channels, timeNs: report.isTimed ? UInt64(max(firstSampleNs, 0)) : nil,
            skipped: skipped, position: report.ticks,
            silence: { feed.writeSkipped(samples: $0) },
            audio: { feed.write($0, firstSampleTimeNs: $1) })
    }

    /// Forgets what came before: the stream stops or starts again.
    func reset() {
        cycleWatch = PipeWireCycleWatch()
        zeroCycleWatch.reset()
        skipHold.reset()
        lastTicks = nil
    }
}
