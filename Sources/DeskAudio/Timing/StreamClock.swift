import Synchronization

/// When a capture stream's samples sounded, by the audio server's own clock: the stream's
/// thread reports, for a chunk it writes into the ring, the CLOCK_MONOTONIC time of the
/// chunk's first sample (played into the sink, for app audio; captured by the device, for a
/// microphone); a `ClockEstimator` smooths the reports into a line, which the worker reads
/// to stamp frames. Positions are samples written into the source's ring since the stream
/// started. The clock is the reporting thread's; the line it publishes (`published`) is any
/// thread's, and neither side waits for the other.
final class StreamClock {
    /// The line a reader got, and how far single reports stray from it.
    struct Reading: Equatable, Sendable {
        var line: ClockEstimator.Line
        /// Root mean square of the reports' distance from the line, in ns.
        var jitterNs: Double
        /// The audio clock's rate against CLOCK_MONOTONIC, in parts per million.
        var rateErrorPPM: Double
        /// Times the line started again from a report far off it.
        var relocks: Int
    }

    /// How a reported time was found.
    enum Source {
        /// From the server's clock: it may stray either way.
        case serverClock
        /// Worked back from when the samples arrived (at `arrivedAtNs`, CLOCK_MONOTONIC),
        /// read in fragments of `readSamples` samples per channel: it may be late, never early
        /// (`ArrivalEnvelope`).
        case arrival(readSamples: Int, arrivedAtNs: UInt64)
    }

    /// The line, for any thread.
    let published: PublishedClockLine
    private var estimator = ClockEstimator()
    private var envelope = ArrivalEnvelope()
    private var skipWatch = SkippedCycleWatch()

    /// A clock with no line yet, publishing to `published`.
    init(publishingTo published: PublishedClockLine = PublishedClockLine()) {
        self.published = published
    }

    /// Stream thread: sample `position` of the ring's stream sounded at `timeNs`
    /// (CLOCK_MONOTONIC), as found by `source`. Allocates nothing, waits for nothing.
    func report(position samplePosition: Int64, timeNs: UInt64, source: Source) {
        let line: ClockEstimator.Line?
        switch source {
        case .serverClock:
            estimator.report(position: samplePosition, timeNs: timeNs)
            line = estimator.line
        case .arrival(let readSamples, let arrivedAtNs):
            skipWatch.readSamples = readSamples
            line = arrivalLine(position: samplePosition, timeNs: timeNs, arrivedAtNs: arrivedAtNs)
        }
        guard let line else { return }
        published.publish(
            Reading(line: line, jitterNs: estimator.jitterNs, rateErrorPPM: estimator.rateErrorPPM, relocks: estimator.relocks))
    }

    // A report worked back from an arrival: the line to publish, or nil for none new. A
    // report later than the line by more than the loop's step size is left out, from the
    // first reports on: an arrival is late when the reading thread ran late, which says
    // nothing of the clock (the loop would start again from it, and again from the next
    // report, on time: two time steps for a late wake-up; R-PP-BURST, R-PP-BURST-SETTLING). A
    // lateness that lasts is a skip, which the watch finds, measured from its own marks while
    // the line settles, and once the envelope has settled the line also steps where the
    // reports show it is off by more than arrivals stray (`steppedEstimator`).
    private func arrivalLine(position: Int64, timeNs: UInt64, arrivedAtNs: UInt64) -> ClockEstimator.Line? {
        let time = Double(timeNs)
        let predicted = estimator.line?.timeNs(ofPosition: position)
        let settled = envelope.isSettled(at: position)
        if let predicted {
            skipWatch.note(position: position, timeNs: timeNs, estimator: estimator)
            let distance = time - predicted
            if let stepped = steppedEstimator(
                position: position, timeNs: timeNs, arrivedAtNs: arrivedAtNs, distanceNs: distance, settled: settled),
                var line = stepped.line
            {
                estimator = stepped
                skipWatch.reset()
                envelope.restartWindow(at: position)
                line.timeNs += envelope.shift(
                    afterReportOf: position, distanceNs: time - line.timeNs(ofPosition: position), lineMovedNs: 0)
                return line
            }
            if distance >= estimator.stepThresholdNs {
                envelope.leftOut(position: position)
                return nil
            }
        }
        let relocksBefore = estimator.relocks
        estimator.report(position: position, timeNs: timeNs)
        guard var line = estimator.line else { return nil }
        // The report's distance from the line it came to: nil where the line started again.
        var distance = predicted.map { time - $0 }
        if estimator.relocks != relocksBefore {
            skipWatch.reset()
            distance = nil
        }
        let lineMoved = predicted.map { line.timeNs(ofPosition: position) - $0 } ?? 0
        line.timeNs += envelope.shift(afterReportOf: position, distanceNs: distance, lineMovedNs: lineMoved)
        return line
    }

    // The estimator moved to where the samples now are, or nil. Later: the watch saw every
    // report of 100 ms more than 7.5 ms late, coming over 100 ms (graph cycles skipped while
    // the machine stalled), or every report of 250 ms late (one skipped cycle). Earlier: a
    // report came before the envelope's least distance allows, and arrivals are never early
    // (the line was moved late by a stretch of late wake-ups taken for a skip, or the server
    // caught up).
    // (While the line settles, only the watch's later: a large skip measured from the
    // envelope as it stands, made from lines since moved (within 1 ms on the traces of
    // R-PP-SKIP), and one cycle from its own marks; an early report starts the loop's line again.)
    private func steppedEstimator(
        position: Int64, timeNs: UInt64, arrivedAtNs: UInt64, distanceNs: Double, settled: Bool
    ) -> ClockEstimator? {
        let earliest = envelope.earliestNs
        if let skipped = skipWatch.largeSkip(
            at: position, timeNs: timeNs, arrivedAtNs: arrivedAtNs, earliestNs: earliest, estimator: estimator)
        {
            return skipped
        }
        guard settled else { return skipWatch.skippedCycle(at: position, earliestNs: nil) }
        if let skipped = skipWatch.skippedCycle(at: position, earliestNs: earliest) { return skipped }
        let earlyNs = earliest - distanceNs
        guard earlyNs > skipWatch.stepThresholdNs else { return nil }
        var stepped = estimator
        stepped.step(byNs: -earlyNs, at: position)
        return stepped
    }

    /// The line published last, or nil before the stream's first report (`published.reading`).
    var reading: Reading? { published.reading }

    /// While no stream reports: forgets the line (a new stream, maybe on another clock).
    func reset() {
        estimator.reset()
        envelope.reset()
        skipWatch.reset()
        published.forget()
    }
}

/// The line a `StreamClock` published last, for any thread: written by the reporting thread
/// under a sequence count (odd while it writes), so neither side waits for the other.
final class PublishedClockLine: Sendable {
    private let sequence = Atomic<UInt64>(0)
    private let position = Atomic<Int64>(0)
    private let timeBits = Atomic<UInt64>(0)
    private let periodBits = Atomic<UInt64>(0)
    private let jitterBits = Atomic<UInt64>(0)
    private let rateBits = Atomic<UInt64>(0)
    private let relocks = Atomic<Int>(0)
    private let isPublished = Atomic<Bool>(false)

    /// The reporting thread's: `reading` becomes the line.
    fileprivate func publish(_ reading: StreamClock.Reading) {
        sequence.add(1, ordering: .sequentiallyConsistent)
        position.store(reading.line.position, ordering: .sequentiallyConsistent)
        timeBits.store(reading.line.timeNs.bitPattern, ordering: .sequentiallyConsistent)
        periodBits.store(reading.line.nanosecondsPerSample.bitPattern, ordering: .sequentiallyConsistent)
        jitterBits.store(reading.jitterNs.bitPattern, ordering: .sequentiallyConsistent)
        rateBits.store(reading.rateErrorPPM.bitPattern, ordering: .sequentiallyConsistent)
        relocks.store(reading.relocks, ordering: .sequentiallyConsistent)
        isPublished.store(true, ordering: .sequentiallyConsistent)
        sequence.add(1, ordering: .sequentiallyConsistent)
    }

    /// The reporting side's, while no stream reports: no line until the next is published.
    fileprivate func forget() {
        isPublished.store(false, ordering: .sequentiallyConsistent)
    }

    /// The current line, or nil before the stream's first report. Any thread; never waits
    /// on the reporting thread (it retries a read that a report overlapped, a few times,
    /// then says nil for now).
    var reading: StreamClock.Reading? {
        for _ in 0..<64 {
            let before = sequence.load(ordering: .sequentiallyConsistent)
            guard before & 1 == 0 else { continue }
            guard isPublished.load(ordering: .sequentiallyConsistent) else { return nil }
            let reading = StreamClock.Reading(
                line: ClockEstimator.Line(
                    position: position.load(ordering: .sequentiallyConsistent),
                    timeNs: Double(bitPattern: timeBits.load(ordering: .sequentiallyConsistent)),
                    nanosecondsPerSample: Double(bitPattern: periodBits.load(ordering: .sequentiallyConsistent))),
                jitterNs: Double(bitPattern: jitterBits.load(ordering: .sequentiallyConsistent)),
                rateErrorPPM: Double(bitPattern: rateBits.load(ordering: .sequentiallyConsistent)),
                relocks: relocks.load(ordering: .sequentiallyConsistent))
            if sequence.load(ordering: .sequentiallyConsistent) == before { return reading }
        }
        return nil
    }
}
