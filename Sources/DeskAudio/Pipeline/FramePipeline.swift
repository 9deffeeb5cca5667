/// Turns captured PCM into AudioFrame bytes: framer → zero gate → Opus → header.
/// Everything it needs is allocated at creation; `process` allocates nothing.
/// Not thread-safe: one thread (the library's worker) drives it.
public final class FramePipeline {
    /// Running counts, for stats and tests.
    public struct Counters: Equatable, Sendable {
        /// 10 ms frames cut from captured audio.
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

    /// The Opus encoder; its bitrate and complexity can be changed between frames.
    public let encoder: OpusFrameEncoder
    /// The zero gate.
    public var gate: ZeroGate
    /// Counts so far.
    public private(set) var counters = Counters()
    /// Interleaved floats still missing from the next frame (1 to a whole frame).
    public var floatsToNextFrame: Int { AudioFormat.frameFloats - framer.pendingFloats }

    private var framer = Framer()
    private let output: UnsafeMutableRawBufferPointer
    private var sequence: UInt32 = 0
    private var sampleClock: UInt64 = 0
    private var samplesIn: UInt64 = 0
    private var markNextAfterGap = false
    private var frameSources: AudioFrameHeader.Flags = []

    /// A pipeline with its own encoder and gate.
    public init(encoder: OpusFrameEncoder, gate: ZeroGate = ZeroGate()) {
        self.encoder = encoder
        self.gate = gate
        output = .allocate(byteCount: AudioFrameWriter.maxFrameBytes, alignment: 8)
    }

    deinit { output.deallocate() }

    /// Feeds interleaved stereo floats from `sources` whose last sample was captured at
    /// `endTimeNs` (CLOCK_MONOTONIC). `deliver` gets each AudioFrame (header + Opus
    /// packet), valid only during the call, in order. A frame's flags name every source
    /// that contributed to it.
    public func process(
        _ chunk: UnsafeBufferPointer<Float>, sources: AudioFrameHeader.Flags = [.app], endTimeNs: UInt64,
        deliver: (UnsafeRawBufferPointer) -> Void
    ) {
        samplesIn += UInt64(chunk.count / AudioFormat.channels)
        let chunkEndSample = samplesIn
        frameSources.formUnion(sources)
        framer.append(chunk) { frame in
            handle(frame, chunkEndSample: chunkEndSample, endTimeNs: endTimeNs, deliver: deliver)
            frameSources = sources
        }
    }

    /// Marks a break in the audio (capture stopped, restarted or lost data): the partial
    /// frame is dropped, the encoder forgets the old audio (its look-ahead would otherwise
    /// carry the last 2.5 ms of it into the next frame), the sample clock moves on by
    /// `skippedSamples`, and the next frame sent carries the after-gap flag.
    public func markDiscontinuity(skippedSamples: UInt64) {
        framer.reset()
        encoder.reset()
        frameSources = []
        gate.reset()
        sampleClock += skippedSamples
        samplesIn = sampleClock
        markNextAfterGap = true
    }

    private func handle(
        _ frame: UnsafeBufferPointer<Float>, chunkEndSample: UInt64, endTimeNs: UInt64,
        deliver: (UnsafeRawBufferPointer) -> Void
    ) {
        let frameClock = sampleClock
        sampleClock += UInt64(AudioFormat.frameSamples)
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
        let packet = UnsafeMutableRawBufferPointer(
            rebasing: output[AudioFrameHeader.byteCount...]
        ).bindMemory(to: UInt8.self)
        let length: Int
        do {
            length = try encoder.encode(frame, into: packet)
        } catch {
            counters.framesFailed += 1
            markNextAfterGap = true
            return
        }
        let samplesAfterStart = chunkEndSample - min(chunkEndSample, frameClock)
        let captureTime = endTimeNs &- samplesAfterStart * 1_000_000_000 / UInt64(AudioFormat.sampleRate)
        let header = AudioFrameHeader(
            flags: flags, sequence: sequence, sampleClock: frameClock,
            captureTimeNs: captureTime, payloadLength: UInt16(length))
        AudioFrameWriter.write(header, into: output)
        sequence &+= 1
        let total = AudioFrameHeader.byteCount + length
        counters.framesSent += 1
        counters.bytesSent += UInt64(total)
        deliver(UnsafeRawBufferPointer(rebasing: output[0..<total]))
    }
}
