/// Where each chunk the worker frames stands on the timeline: the one place a frame's time
/// is decided from the timing source's line (`StreamClock.Reading`), the last mapping, or,
/// before any, the time the chunk arrived; and whether the timeline starts a line or steps
/// there (the frame's `TIME_STEP`), and how far the sample clock moves over a break. A value
/// type with no clock of its own: the caller passes what it needs. The worker's thread only.
struct ChunkStamper {
    /// A chunk's place on the timeline.
    struct Stamp {
        /// The mapping of the sample after the chunk (its time, rate, origin).
        var end: CaptureClock
        /// The times' line starts at this chunk (a break, or another clock): it locks.
        var lineStarted: Bool
        /// The chunk is on another mapping than the last (a relock, a break, another clock).
        var timeStepped: Bool
        /// Samples the sample clock moves on by before this chunk (the outage of a break), if
        /// one came before it: the caller marks the discontinuity and moves `end`'s sample
        /// clock, then hands the stamp back (`framed`).
        var outageSamples: UInt64?
    }

    // When the audio before the break ended (0: no audio yet), while a break is open.
    private var gapSince: UInt64?
    private var lastChunkEndNs: UInt64?
    // The last chunk stamped by a server clock, for chunks that cannot be.
    private var lastServerClock: CaptureClock?
    // The mapping the last chunk was stamped on (its relocks and origin).
    private var lastMapping: (relocks: Int, origin: CaptureClock.Origin)?

    /// Whether a break is open: the next chunk closes it.
    var isBreakOpen: Bool { gapSince != nil }

    /// A new run: nothing is owed from the last one but an open break.
    mutating func startRun() {
        lastServerClock = nil
        lastMapping = nil
    }

    /// The audio before a break is over (a source reopened after a failure): the next chunk
    /// follows a gap, which ends where that chunk's audio begins. A second break before any
    /// audio (a stall, then the server's restart) is the same gap (docs/reliability.md,
    /// R-RESTART-GAP).
    mutating func breakInAudio() {
        if gapSince == nil { gapSince = lastChunkEndNs ?? 0 }
        lastServerClock = nil
    }

    /// The stamp of a chunk of `samples` per channel whose last sample is followed by sample
    /// `endSample` of the sample clock: on the timing source's line (`server`: the reading,
    /// the source's stream position after the chunk and its flags) when the whole chunk is
    /// that source's audio and its server has reported; otherwise along the last such
    /// mapping, so that times never jump; before any, from `nowNs` less the `waitingSamples`
    /// still in the rings (captured after this chunk ended).
    mutating func stamp(
        samples: Int, endSample: UInt64, server: (reading: StreamClock.Reading, position: Int64, flags: AudioFrameHeader.Flags)?,
        nowNs: UInt64, waitingSamples: Int
    ) -> Stamp {
        let end = mapping(endSample: endSample, server: server, nowNs: nowNs, waitingSamples: waitingSamples)
        // A break, a relock of the server's clock, or another clock taking over: the timeline
        // steps at the next frame (its flag tells the host). A break or another clock starts a
        // line, which locks; a relock moves a running one.
        let lineStarted = gapSince != nil || (lastMapping.map { $0.origin != end.origin } ?? false)
        let timeStepped = lineStarted || (lastMapping.map { $0.relocks != end.relocks } ?? false)
        lastMapping = (end.relocks, end.origin)
        var outage: UInt64?
        if let since = gapSince {
            // The sample clock moves on by the outage, up to this chunk's first sample (its
            // time by the new stream's clock). (Only the sample clock moves: the last mapping
            // was dropped at the break, so the chunk's time does not depend on it.)
            gapSince = nil
            let startNs = end.timeNs &- UInt64(Double(samples) * end.nanosecondsPerSample)
            outage = AudioFormat.samples(inNanoseconds: since > 0 && startNs > since ? startNs - since : 0)
        }
        return Stamp(end: end, lineStarted: lineStarted, timeStepped: timeStepped, outageSamples: outage)
    }

    /// The chunk was framed with `end`, its sample clock as the pipeline counts it now: the
    /// next chunks go on from it.
    mutating func framed(_ end: CaptureClock) {
        lastChunkEndNs = end.timeNs
        if case .serverClock = end.origin { lastServerClock = end }
    }

    private func mapping(
        endSample: UInt64, server: (reading: StreamClock.Reading, position: Int64, flags: AudioFrameHeader.Flags)?,
        nowNs: UInt64, waitingSamples: Int
    ) -> CaptureClock {
        if let server {
            let endNs = server.reading.line.timeNs(ofPosition: server.position)
            if endNs > 0 {
                return CaptureClock(
                    sampleClock: endSample, timeNs: UInt64(endNs),
                    nanosecondsPerSample: server.reading.line.nanosecondsPerSample, rateErrorPPM: server.reading.rateErrorPPM,
                    jitterNs: server.reading.jitterNs, relocks: server.reading.relocks, origin: .serverClock(server.flags))
            }
        }
        if var last = lastServerClock {
            last.timeNs = last.timeNs(ofSampleClock: endSample)
            last.sampleClock = endSample
            return last
        }
        return CaptureClock(
            sampleClock: endSample, timeNs: nowNs &- MonotonicClock.nanoseconds(ofSamples: UInt64(waitingSamples)),
            nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample, rateErrorPPM: 0, jitterNs: 0, relocks: 0,
            origin: .arrival)
    }
}
