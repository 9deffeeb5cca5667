/// Turns captured PCM into AudioFrame bytes: framer → zero gate → Opus → header.
/// Everything it needs is allocated at creation; `process` allocates nothing.
/// Not thread-safe: one thread (the library's worker) drives it.
public final class FramePipeline {
    /// Running counts, for stats and tests.
    public struct Counters: Equatable, Sendable {
        /// Frames cut from captured audio.
        public var framesCaptured: UInt64 = 0
        /// Frames encoded and handed to the host.
        public var framesSent: UInt64 = 0
        /// Frames held back by the zero gate.
        public var framesGated: UInt64 = 0
        /// Frames lost because libopus failed on them.
        public var framesFailed: UInt64 = 0
        /// AudioFrame bytes handed to the host.
        public var bytesSent: UInt64 = 0
    }

    /// The Opus encoder; its bitrate and complexity can be changed between frames, and it
    /// can be replaced by one of another layout (`replaceEncoder`).
    public private(set) var encoder: OpusFrameEncoder
    /// Interleaved channels of the audio it takes: its encoder's layout's.
    public var channels: Int { encoder.layout.channels }
    /// The zero gate.
    public var gate: ZeroGate
    /// Counts so far.
    public private(set) var counters = Counters()
    /// Interleaved floats still missing from the next frame (1 to a whole frame).
    public var floatsToNextFrame: Int { framer.currentFrameFloats - framer.pendingFloats }
    /// The frame length asked for last; the frame being filled may still have the one before.
    public private(set) var frameDuration: FrameDuration

    private var framer: Framer
    private let output: UnsafeMutableRawBufferPointer
    private var sequence: UInt32 = 0
    private var sampleClock: UInt64 = 0
    private var samplesIn: UInt64 = 0
    private var markNextAfterGap = false
    private var markNextTimeStep = false
    // The last frame sent, where its times were on a server clock's line: its sample clock,
    // length and capture time (the next one's time must follow from them).
    private var lastSentOnClock: (sampleClock: UInt64, samples: Int, timeNs: UInt64)?
    // The sample clock where the times' line last started (the caller said so, a break, the
    // start): the line locks for `TimingPolicy.standard.lockingSamples` from there.
    private var lineStartSample: UInt64 = 0
    private var frameSources: AudioFrameHeader.Flags = []
    // The first frame after a break is stamped from the chunk it began in, whose time the
    // caller measured the break's outage with, so its capture time and sample clock agree;
    // a chunk on another mapping before it is complete steps the frame after it
    // (docs/reliability.md, R-RESTART-LINE).
    private enum AfterBreak {
        case none
        case awaitingChunk
        case stampedFrom(ChunkEnd, stepsNext: Bool)
    }
    private var afterBreak = AfterBreak.none

    /// A pipeline with its own encoder and gate, cutting frames of `frameDuration`.
    public init(encoder: OpusFrameEncoder, gate: ZeroGate = ZeroGate(), frameDuration: FrameDuration = .ms10) {
        self.encoder = encoder
        self.gate = gate
        self.frameDuration = frameDuration
        framer = Framer(duration: frameDuration, channels: encoder.layout.channels)
        output = .allocate(byteCount: AudioFrameWriter.maxFrameBytes(for: .surround71), alignment: 8)
    }

    /// Encodes with `newEncoder` (another channel layout, say) from now on: a discontinuity
    /// (`markDiscontinuity`) with nothing skipped, so sequence and sample clock run on and
    /// the next frame carries the after-gap flag. Allocates; call it between runs, not per
    /// frame.
    public func replaceEncoder(_ newEncoder: OpusFrameEncoder) {
        encoder = newEncoder
        framer = Framer(duration: frameDuration, channels: newEncoder.layout.channels)
        markDiscontinuity(skippedSamples: 0)
    }

    deinit { output.deallocate() }

    /// Feeds interleaved floats (of the encoder's layout) from `sources`; the sample after
    /// the last one sounds at `endTimeNs` (CLOCK_MONOTONIC), and each lasts
    /// `nanosecondsPerSample` (nominal unless the server's clock says otherwise). `timeStepped`:
    /// those times are on a clock mapping other than the last chunk's (it started again), so
    /// the next frame sent carries the time-step flag. `onServerClock`: the times are on a
    /// server clock's line, which frames of a continuous run follow to the nanosecond: a frame
    /// whose time moved more than `TimingPolicy.standard.frameStepToleranceNs` against the last one's (its time plus
    /// its length, at this chunk's rate) carries the flag too, whatever moved it (while the
    /// line locks, `TimingPolicy.standard.lockingFrameStepToleranceNs`). `lineStarted`: the line locks from this
    /// chunk on (the first times of a clock, or of another clock); a relock of a running line
    /// is no new lock, and its moves are flagged as any. `deliver` gets each AudioFrame (header +
    /// Opus packet), valid only during the call, in order. A frame's flags name every source
    /// that contributed to it.
    public func process(
        _ chunk: UnsafeBufferPointer<Float>, sources: AudioFrameHeader.Flags = .app, endTimeNs: UInt64,
        nanosecondsPerSample: Double = FramePipeline.nominalNanosecondsPerSample, timeStepped: Bool = false,
        lineStarted: Bool = false, onServerClock: Bool = false, deliver: (UnsafeRawBufferPointer) -> Void
    ) {
        // (The first frame this chunk completes is the first stamped on the new mapping.)
        if timeStepped || lineStarted {
            if case .stampedFrom(let first, _) = afterBreak {
                afterBreak = .stampedFrom(first, stepsNext: true)
            } else {
                markNextTimeStep = true
            }
        }
        if lineStarted { lineStartSample = samplesIn }
        samplesIn += UInt64(chunk.count / encoder.layout.channels)
        let chunkEnd = ChunkEnd(
            sample: samplesIn, timeNs: endTimeNs, nanosecondsPerSample: nanosecondsPerSample, onServerClock: onServerClock)
        if case .awaitingChunk = afterBreak { afterBreak = .stampedFrom(chunkEnd, stepsNext: false) }
        frameSources.formUnion(sources)
        framer.append(chunk) { frame in
            handle(frame, chunkEnd: chunkEnd, deliver: deliver)
            frameSources = sources
        }
    }

    /// Nanoseconds one sample lasts at 48 kHz.
    public static let nominalNanosecondsPerSample = 1e9 / Double(AudioFormat.sampleRate)

    // Where the chunk that completes a frame ends, and how its times were found.
    private struct ChunkEnd {
        var sample: UInt64
        var timeNs: UInt64
        var nanosecondsPerSample: Double
        var onServerClock: Bool
    }

    /// The sample clock of the sample after everything processed so far (the next frame's
    /// sample clock once the framer's partial frame is complete).
    public var samplesProcessed: UInt64 { samplesIn }

    /// Cuts frames of `duration` from the next frame boundary on (the frame being filled
    /// keeps its length). The sample clock, sequence and gate run on across the change.
    public func setFrameDuration(_ duration: FrameDuration) {
        guard duration != frameDuration else { return }
        frameDuration = duration
        framer.setDuration(duration)
    }

    /// Marks a break in the audio (capture stopped, restarted or lost data) after the audio
    /// processed so far: the partial frame is dropped, the encoder forgets the old audio (its
    /// look-ahead would otherwise carry the last 2.5 ms of it into the next frame), the sample
    /// clock moves on past the dropped audio and `skippedSamples` more (the break's length),
    /// so the next frame's sample clock is its first sample's place on the timeline, and the
    /// next frame sent carries the after-gap flag.
    public func markDiscontinuity(skippedSamples: UInt64) {
        framer.reset()
        encoder.reset()
        frameSources = []
        gate.reset()
        samplesIn += skippedSamples
        sampleClock = samplesIn
        markNextAfterGap = true
        lastSentOnClock = nil
        lineStartSample = samplesIn
        afterBreak = .awaitingChunk
    }

    private func handle(
        _ frame: UnsafeBufferPointer<Float>, chunkEnd completing: ChunkEnd,
        deliver: (UnsafeRawBufferPointer) -> Void
    ) {
        var chunkEnd = completing
        var stepsNext = false
        if case .stampedFrom(let first, let laterChunkStepped) = afterBreak {
            (chunkEnd, stepsNext, afterBreak) = (first, laterChunkStepped, .none)
        }
        defer { if stepsNext { markNextTimeStep = true } }
        let frameClock = sampleClock
        let frameSamples = frame.count / encoder.layout.channels
        sampleClock += UInt64(frameSamples)
        counters.framesCaptured += 1
        var flags = frameSources
        switch gate.decide(frame) {
        case .hold:
            counters.framesGated += 1
            return
        case .sendAfterGap:
            flags.insert(.afterGap)
        case .send:
            break
        }
        if markNextAfterGap {
            flags.insert(.afterGap)
            markNextAfterGap = false
        }
        let samplesAfterStart = chunkEnd.sample - min(chunkEnd.sample, frameClock)
        let captureTime = chunkEnd.timeNs &- UInt64(Double(samplesAfterStart) * chunkEnd.nanosecondsPerSample)
        // (The first frame of a capture follows no frame: nothing steps.)
        if sequence > 0 && (markNextTimeStep || movedAgainstSampleClock(frameClock, captureTime, chunkEnd)) {
            flags.insert(.timeStep)
        }
        let mapping = encoder.layout.mappingFamily == 0 ? nil : encoder.mapping
        let headerBytes = mapping.map { AudioFrameHeader.byteCount + 2 + Int($0.channels) } ?? AudioFrameHeader.byteCount
        let packet = UnsafeMutableRawBufferPointer(rebasing: output[headerBytes...]).bindMemory(to: UInt8.self)
        let length: Int
        do {
            length = try encoder.encode(frame, into: packet)
        } catch {
            counters.framesFailed += 1
            markNextAfterGap = true
            return
        }
        let header = AudioFrameHeader(
            flags: flags, channels: UInt8(encoder.layout.channels),
            codec: mapping == nil ? AudioFrameHeader.codecOpus : AudioFrameHeader.codecOpusMultistream,
            sequence: sequence, sampleClock: frameClock, captureTimeNs: captureTime,
            frameSamples: UInt16(frameSamples), payloadLength: UInt16(length), mapping: mapping)
        AudioFrameWriter.write(header, into: output)
        sequence &+= 1
        markNextTimeStep = false
        lastSentOnClock = chunkEnd.onServerClock ? (frameClock, frameSamples, captureTime) : nil
        let total = headerBytes + length
        counters.framesSent += 1
        counters.bytesSent += UInt64(total)
        deliver(UnsafeRawBufferPointer(rebasing: output[0..<total]))
    }

    // Whether a frame starting at `sampleClock`, stamped `timeNs`, moved against the last one
    // sent right before it by more than the tolerance (both on a server clock).
    private func movedAgainstSampleClock(_ sampleClock: UInt64, _ timeNs: UInt64, _ chunkEnd: ChunkEnd) -> Bool {
        guard chunkEnd.onServerClock, let last = lastSentOnClock,
            last.sampleClock + UInt64(last.samples) == sampleClock
        else { return false }
        let expected = Double(last.timeNs) + Double(last.samples) * chunkEnd.nanosecondsPerSample
        let locking = sampleClock - min(sampleClock, lineStartSample) < TimingPolicy.standard.lockingSamples
        return abs(Double(timeNs) - expected)
            > (locking ? TimingPolicy.standard.lockingFrameStepToleranceNs : TimingPolicy.standard.frameStepToleranceNs)
    }
}
