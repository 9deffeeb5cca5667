import CSpeexDSP
import Glibc

/// PCM the host got elsewhere (another capture API, a file, a speech engine), brought to
/// 48 kHz stereo float by speexdsp's resampler and queued for the library's worker, which
/// mixes it with captured audio (or frames it alone). Any thread may push; pushes are
/// serialized by a lock no audio server thread ever takes.
public final class HostPCMInput: Sendable {
    /// Sample formats a host may push.
    public enum SampleFormat: Int32, Sendable, CaseIterable {
        /// Signed 16-bit, native byte order.
        case s16 = 1
        /// 32-bit float, native byte order, nominally within ±1.
        case f32 = 2

        var bytes: Int { self == .s16 ? 2 : 4 }
    }

    /// Lowest and highest input rates, Hz.
    public static let rates: ClosedRange<Int32> = 8_000...96_000
    /// Most input frames one push may carry: 10 s at the highest rate.
    public static let maxFramesPerPush = 960_000
    /// How much resampled audio waits for the worker at most: 1 s.
    public static let queueFloats = AudioFormat.sampleRate * AudioFormat.channels

    /// The resampled audio, for the worker.
    public let ring = SampleRing(minimumFloats: HostPCMInput.queueFloats)

    private static let blockMs = 10
    fileprivate static let maxBlockFrames = Int(rates.upperBound) / 1000 * blockMs
    fileprivate static let maxOutFrames = AudioFormat.frameSamples + 32

    // The resampler and its buffers: one push or reset at a time.
    private let resampling = LockOwned(Resampling())

    /// An input with nothing queued.
    public init() {}

    /// Checks and queues `bytes` of interleaved PCM. Returns the input frames taken: all of
    /// them, or fewer when the 1 s queue is full (push the rest later; nothing taken is
    /// lost). Throws, taking nothing, for what `check` refuses.
    public func push(
        _ bytes: UnsafeRawBufferPointer, format: SampleFormat, channels: Int32, rate: Int32
    ) throws(DeskAudioError) -> Int {
        try Self.check(bytes, format: format, channels: channels, rate: rate)
        let frameBytes = format.bytes * Int(channels)
        let frames = bytes.count / frameBytes
        guard frames > 0, let base = bytes.baseAddress.map(CallScoped.init) else { return 0 }
        return try resampling.withLock { resampling throws(DeskAudioError) in
            try resampling.prepare(channels: channels, rate: rate)
            let blockFrames = Int(rate) / 1000 * HostPCMInput.blockMs
            var taken = 0
            while taken < frames, ring.freeFloats >= HostPCMInput.maxOutFrames * 2 {
                let count = min(blockFrames, frames - taken)
                resampling.convert(base.value + taken * frameBytes, frames: count, format: format, channels: Int(channels))
                let consumed = resampling.resample(frames: count, into: ring)
                guard consumed > 0 else { break }
                taken += consumed
            }
            return taken
        }
    }

    /// Throws for a bad format, channel count, rate or size, or a float sample that is NaN
    /// or infinite.
    static func check(
        _ bytes: UnsafeRawBufferPointer, format: SampleFormat, channels: Int32, rate: Int32
    ) throws(DeskAudioError) {
        guard channels == 1 || channels == 2 else {
            throw .invalidArgument("channels must be 1 or 2, not \(channels)")
        }
        guard HostPCMInput.rates.contains(rate) else {
            throw .notSupported("sample rate \(rate) Hz is outside 8000…96000 Hz")
        }
        let frameBytes = format.bytes * Int(channels)
        guard bytes.count % frameBytes == 0 else {
            throw .invalidArgument("\(bytes.count) bytes are not whole frames of \(frameBytes) bytes")
        }
        let frames = bytes.count / frameBytes
        guard frames <= HostPCMInput.maxFramesPerPush else {
            throw .invalidArgument("\(frames) frames in one push; at most \(HostPCMInput.maxFramesPerPush)")
        }
        guard format == .f32, frames > 0, let start = bytes.baseAddress else { return }
        let samples = start.assumingMemoryBound(to: Float.self)
        for index in 0..<(frames * Int(channels)) where !samples[index].isFinite {
            throw .invalidArgument("sample \(index) is \(samples[index]): floats must be finite")
        }
    }

    /// Queues all of `bytes` (as `push` takes them; the last frame's time is `endTimeNs`),
    /// calling `drain` each time part is queued with the time of the last frame queued, so
    /// that the queue never fills. Returns the frames taken: all of them.
    func pushAll(
        _ bytes: UnsafeRawBufferPointer, format: SampleFormat, channels: Int32, rate: Int32, endTimeNs: UInt64,
        drain: (UInt64) -> Void
    ) throws(DeskAudioError) -> Int {
        let frameBytes = format.bytes * Int(max(channels, 1))
        var taken = 0
        repeat {
            let rest = UnsafeRawBufferPointer(rebasing: bytes[(taken * frameBytes)...])
            let pushed = try push(rest, format: format, channels: channels, rate: rate)
            taken += pushed
            let left = rest.count / frameBytes - pushed
            drain(endTimeNs &- MonotonicClock.nanoseconds(ofSamples: UInt64(left), rate: Int(rate)))
            if pushed == 0 { break }  // (nothing left, or the resampler took nothing)
        } while taken * frameBytes < bytes.count
        return taken
    }

    /// Forgets queued audio and the resampler's history (capture stopped).
    public func reset() {
        resampling.withLock { resampling in
            resampling.forgetHistory()
            ring.discardAll()
        }
    }

    /// speexdsp's resampler for the current channel count and rate, and the buffers around it.
    private final class Resampling {
        private var resampler: OpaquePointer?
        private var rate: Int32 = 0
        private var channels: Int32 = 0
        private let input: UnsafeMutableBufferPointer<Float>
        private let output: UnsafeMutableBufferPointer<Float>
        private let stereo: UnsafeMutableBufferPointer<Float>

        init() {
            input = .allocate(capacity: HostPCMInput.maxBlockFrames * 2)
            output = .allocate(capacity: HostPCMInput.maxOutFrames * 2)
            stereo = .allocate(capacity: HostPCMInput.maxOutFrames * 2)
        }

        deinit {
            if let resampler { speex_resampler_destroy(resampler) }
            input.deallocate()
            output.deallocate()
            stereo.deallocate()
        }

        /// A resampler for this channel count and rate, made only when they change.
        func prepare(channels: Int32, rate: Int32) throws(DeskAudioError) {
            if resampler != nil, channels == self.channels, rate == self.rate { return }
            if let resampler { speex_resampler_destroy(resampler) }
            var error: Int32 = 0
            resampler = speex_resampler_init(
                spx_uint32_t(channels), spx_uint32_t(rate), spx_uint32_t(AudioFormat.sampleRate),
                SPEEX_RESAMPLER_QUALITY_DESKTOP, &error)
            guard resampler != nil, error == 0 else {
                resampler = nil
                throw .outOfResources(
                    "speexdsp could not make a resampler: \(String(cString: speex_resampler_strerror(error)))")
            }
            self.channels = channels
            self.rate = rate
        }

        /// Forgets the resampler's history.
        func forgetHistory() {
            if let resampler { speex_resampler_reset_mem(resampler) }
        }

        /// `frames` frames at `source` as floats into the input buffer.
        func convert(_ source: UnsafeRawPointer, frames: Int, format: SampleFormat, channels: Int) {
            let count = frames * channels
            switch format {
            case .s16:
                let samples = source.assumingMemoryBound(to: Int16.self)
                for index in 0..<count { input[index] = Float(samples[index]) / 32768 }
            case .f32:
                let samples = source.assumingMemoryBound(to: Float.self)
                for index in 0..<count { input[index] = samples[index] }
            }
        }

        /// Resamples `frames` frames of the input buffer to 48 kHz stereo into `ring`;
        /// returns the input frames consumed.
        func resample(frames: Int, into ring: SampleRing) -> Int {
            var consumed = spx_uint32_t(frames)
            var produced = spx_uint32_t(HostPCMInput.maxOutFrames)
            speex_resampler_process_interleaved_float(
                resampler, input.baseAddress, &consumed, output.baseAddress, &produced)
            let outFrames = Int(produced)
            if channels == 1 {
                for index in 0..<outFrames {
                    stereo[2 * index] = output[index]
                    stereo[2 * index + 1] = output[index]
                }
                ring.write(UnsafeBufferPointer(rebasing: stereo[0..<(outFrames * 2)]))
            } else {
                ring.write(UnsafeBufferPointer(rebasing: output[0..<(outFrames * 2)]))
            }
            return Int(consumed)
        }
    }
}
