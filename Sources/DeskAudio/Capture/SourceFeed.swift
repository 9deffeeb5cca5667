import Synchronization

/// Where one capture stream puts its audio: the ring the library's worker reads, the
/// source's level meter, when its samples sounded, the latency the server reports for the
/// stream, and the notices about it. Written by the stream's (server) thread only (the level
/// meter and the clock are that thread's, checked in debug builds); read from any thread.
final class SourceFeed: Sendable {
    /// What the source is, for messages: "app audio" or "the microphone" (from the frame
    /// flags `restart` set).
    var name: String { SourceFeed.name(of: frameFlags) }
    /// The flags the worker puts on frames holding this source's audio.
    var frameFlags: AudioFrameHeader.Flags { AudioFrameHeader.Flags(rawValue: flags.load(ordering: .acquiring)) }
    private let flags = Atomic<UInt8>(0)
    /// Where events and log messages about the source go.
    let notices: NoticeBoard
    /// Captured interleaved floats of the capture's layout, waiting for the worker: room
    /// for 0.5 s of up to 8 channels, of which `restart` lets 0.5 s of its channels be used
    /// (pages never written take no memory).
    let ring = SampleRing(minimumFloats: AudioFormat.sampleRate / 2 * ChannelLayout.surround71.channels)
    /// The source's level over the last second, as the stream's thread measured it.
    let level = PublishedLevel()
    /// The level of each application stream it records, when its selection measures them.
    let appLevels = AppLevels()
    /// When the ring's samples sounded, by the server's clock (for frames' capture times),
    /// as the stream's thread found it.
    let clockLine = PublishedClockLine()
    // What only the stream's thread touches: the level meter and the clock behind the two above.
    private struct StreamSide {
        let meter: LevelMeter
        let clock: StreamClock
    }
    private let streamThread = ThreadClaim()
    private let streamSide: LoopBound<StreamSide>
    private let serverLatency = Atomic<Int64>(-1)
    private let capturing = Atomic<Bool>(false)
    private let writes = Atomic<UInt64>(0)
    private let skipped = Atomic<UInt64>(0)
    private let skippedFrames = Atomic<UInt64>(0)
    private let zeroCycles = Atomic<UInt64>(0)
    private let mixFilled = Atomic<UInt64>(0)
    private let mixDropped = Atomic<UInt64>(0)
    private let refusing = Atomic<Bool>(false)

    /// An idle feed (`restart` says which source it carries).
    init(notices: NoticeBoard) {
        self.notices = notices
        streamSide = LoopBound(
            StreamSide(meter: LevelMeter(publishingTo: level), clock: StreamClock(publishingTo: clockLine)),
            on: "the stream's thread", isOnLoop: { [streamThread] in streamThread.isOwner() })
    }

    /// The source frames flagged `flags` hold, for messages.
    static func name(of flags: AudioFrameHeader.Flags) -> String {
        flags.contains(.app) ? "app audio" : flags.contains(.mic) ? "the microphone" : "no source yet"
    }

    /// Server thread: the stream was moved to `device` (its default changed).
    func reportDeviceChange(to device: String) {
        notices.post(.deviceChanged, "\(name): \(device)")
        notices.log(.info, "\(name) follows the default to \(device)")
    }

    /// Server thread: the stream is fed by something this source must not carry (`why`, for
    /// the log): its audio is dropped, and not counted as written, until `acceptAudio` or a
    /// restart; the capture's stall watch sees a stream no longer fed and reopens it.
    func refuseAudio(_ why: String) {
        guard !refusing.exchange(true, ordering: .relaxed) else { return }
        notices.log(.warning, "\(name): \(why)")
    }

    /// Server thread: the stream's audio is this source's again.
    func acceptAudio() { refusing.store(false, ordering: .relaxed) }

    /// Server thread: a playback stream appeared or went while this source records a
    /// selection of applications; `recorded` says whether the selection takes it.
    func reportPlayback(_ stream: PlaybackStream, appeared: Bool, recorded: Bool) {
        let who = stream.applicationName.isEmpty ? stream.nodeName : stream.applicationName
        let detail = "\(who) (pid \(stream.processID), stream \(stream.id)): \(recorded ? "recorded" : "not recorded")"
        notices.post(appeared ? .appStarted : .appStopped, "\(name): \(detail)")
        notices.log(.info, "\(name): \(appeared ? "started" : "stopped") playing: \(detail)")
    }

    /// True while a stream of this source runs (set by the service that opens it).
    var isCapturing: Bool {
        get { capturing.load(ordering: .acquiring) }
        set { capturing.store(newValue, ordering: .releasing) }
    }

    /// Server thread: meters the samples and queues them for the worker (what does not fit
    /// in the ring is dropped and counted there); `firstSampleTimeNs`, when the server gave
    /// one, is when the first of them sounded (CLOCK_MONOTONIC: played into the sink for app
    /// audio, captured by the device for a microphone), found as `timeSource` says.
    func write(
        _ samples: UnsafeBufferPointer<Float>, firstSampleTimeNs: UInt64? = nil,
        timeSource: StreamClock.Source = .serverClock
    ) {
        guard !refusing.load(ordering: .relaxed) else { return }
        streamSide.withValue { side in
            reportTime(firstSampleTimeNs, source: timeSource, to: side.clock)
            side.meter.measure(samples)
        }
        ring.write(samples)
        writes.add(1, ordering: .relaxed)
    }

    /// Server thread: `samples` (per channel) went by in the server without reaching the
    /// stream (its thread was not run in time, or the server had nothing there): queues as
    /// much silence, up to `TimingPolicy.longestSkipFilledSamples`, so the frames after it
    /// keep their place on the timeline, and counts it; `firstSampleTimeNs`, if given, is when
    /// the first of them sounded (as for `write`). (A longer skip, a process stopped for a
    /// while, is left to the capture clock, which starts its line again.)
    func writeSkipped(
        samples: Int, firstSampleTimeNs: UInt64? = nil, timeSource: StreamClock.Source = .serverClock
    ) {
        guard !refusing.load(ordering: .relaxed) else { return }
        streamSide.withValue { reportTime(firstSampleTimeNs, source: timeSource, to: $0.clock) }
        ring.writeSilence(floats: min(samples, TimingPolicy.standard.longestSkipFilledSamples) * ring.channels)
        skipped.add(UInt64(samples), ordering: .relaxed)
        let frame = AudioFormat.frameSamples
        skippedFrames.add(UInt64((samples + frame - 1) / frame), ordering: .relaxed)
    }


    // Server thread: the next sample written sounded at `timeNs` (if known), as `source` found it.
    private func reportTime(_ timeNs: UInt64?, source: StreamClock.Source, to clock: StreamClock) {
        guard let timeNs else { return }
        clock.report(position: Int64(ring.writtenFloats / ring.channels), timeNs: timeNs, source: source)
    }

    /// Samples per channel the server's graph moved past without this stream, since creation.
    var skippedSamples: UInt64 { skipped.load(ordering: .relaxed) }

    /// The same in 10 ms frames' worth, each skip rounded up (so at least the number of skips).
    var skippedFrameCount: UInt64 { skippedFrames.load(ordering: .relaxed) }

    /// Server thread: the stream got `cycles` graph cycles of exact zeros alone between two of
    /// sound (`PipeWireZeroCycleWatch`): maybe a short pause in the sound, maybe the server's
    /// (PipeWire 0.3.65 hands one consumer of a monitor such cycles now and then, the audio
    /// after them late by as much). They were queued as they came; this counts them.
    func countZeroCycles(_ cycles: Int) {
        if cycles > 0 { zeroCycles.add(UInt64(cycles), ordering: .relaxed) }
    }

    /// Graph cycles of exact zeros alone between two of sound, since creation.
    var zeroCycleCount: UInt64 { zeroCycles.load(ordering: .relaxed) }

    /// Server thread: a capture that mixes streams of its own (one per chosen application)
    /// filled `filled` more samples per channel of a lagging one with silence, and dropped
    /// `dropped` more of its late backlog (`SourceMixer`'s counts, as deltas).
    func countOwnMix(filled: UInt64, dropped: UInt64) {
        if filled > 0 { mixFilled.add(filled, ordering: .relaxed) }
        if dropped > 0 { mixDropped.add(dropped, ordering: .relaxed) }
    }

    /// Samples per channel the capture's own mix filled with silence, and dropped as late,
    /// since creation.
    var ownMixCounts: (filled: UInt64, dropped: UInt64) {
        (mixFilled.load(ordering: .relaxed), mixDropped.load(ordering: .relaxed))
    }

    /// How many times the stream has written, since creation: a count that stops moving is
    /// a stream no longer fed.
    var writeCount: UInt64 { writes.load(ordering: .relaxed) }

    /// Server thread: the latency the server reports from the device to this stream.
    func reportServerLatency(nanoseconds: Int64) {
        serverLatency.store(max(nanoseconds, 0), ordering: .relaxed)
    }

    /// The last latency the server reported, in ns; nil before any report.
    var serverLatencyNs: Int64? {
        let value = serverLatency.load(ordering: .relaxed)
        return value < 0 ? nil : value
    }

    /// While no stream writes: forgets queued audio, levels and latency (a new stream
    /// starts, on a thread of its own), and takes the frame flags and channel count of the
    /// source it now carries.
    func restart(frameFlags: AudioFrameHeader.Flags, channels: Int = AudioFormat.channels) {
        streamThread.release()
        streamSide.withValue { side in
            side.meter.reset()
            side.clock.reset()
        }
        streamThread.release()
        flags.store(frameFlags.rawValue, ordering: .releasing)
        ring.setChannels(channels, minimumFloats: AudioFormat.sampleRate / 2 * channels)
        appLevels.removeAll()
        serverLatency.store(-1, ordering: .relaxed)
        refusing.store(false, ordering: .relaxed)
    }
}
