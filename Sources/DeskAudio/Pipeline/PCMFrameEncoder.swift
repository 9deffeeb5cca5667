import Glibc

/// The sending side without a capture, for a viewer's microphone: PCM a client hands in
/// (s16 or f32, 1 or 2 channels, 8–96 kHz, any chunk size) is resampled to 48 kHz stereo
/// (speexdsp, through `HostPCMInput`) and becomes AudioFrames exactly like a host's: 10 ms
/// frames, the zero gate, a sequence from 0, the 48 kHz sample clock and capture times.
/// Frames carry the MIC flag. Every frame a push completes is handed over during that push,
/// on the pushing thread. Pushing allocates nothing. Any thread; one push at a time (a
/// lock serializes them). Unchecked: a `LockOwned` state would need the caller's handler made
/// escaping (`withoutActuallyEscaping`), whose thunk is a heap allocation per push (`scripts/bench
/// --allocations`: 17 blocks a frame against the harness's 16).
public final class PCMFrameEncoder: @unchecked Sendable {
    /// The encoder's counts and settings.
    public struct Counters: Equatable, Sendable {
        /// Frames cut from the pushed audio, frames sent, frames the zero gate held back.
        public var framesEncoded: UInt64, framesSent: UInt64, framesGated: UInt64
        /// AudioFrame bytes handed over.
        public var bytesSent: UInt64
        /// The echo canceller's figures; nil while it is off.
        public var echo: EchoStats?
    }

    // The resampler, the pipeline and the chunk between them: one push or change at a time.
    private let state: LockedValue<State>

    /// An encoder at `bitrate` (bit/s, 6000…510000) and `complexity` (0…10).
    public init(
        bitrate: Int32 = OpusFrameEncoder.defaultBitrate, complexity: Int32 = OpusFrameEncoder.defaultComplexity
    ) throws(DeskAudioError) {
        state = LockedValue(State(pipeline: FramePipeline(encoder: try OpusFrameEncoder(bitrate: bitrate, complexity: complexity))))
    }

    /// Takes `bytes` of interleaved PCM whose last sample was captured at `endTimeNs`
    /// (CLOCK_MONOTONIC; 0: now) and calls `deliver` with each AudioFrame it completes,
    /// valid only during the call. Returns the input frames taken: all of them. Throws,
    /// taking nothing, for what `HostPCMInput.push` refuses (format, channels, rate, size,
    /// a float that is not finite).
    public func push(
        _ bytes: UnsafeRawBufferPointer, format: HostPCMInput.SampleFormat, channels: Int32, rate: Int32,
        endTimeNs: UInt64 = 0, deliver: (UnsafeRawBufferPointer) -> Void
    ) throws(DeskAudioError) -> Int {
        try state.withLock { state throws(DeskAudioError) in
            let end = endTimeNs == 0 ? LibraryClock.system.nowNs() : endTimeNs
            return try state.input.pushAll(bytes, format: format, channels: channels, rate: rate, endTimeNs: end) {
                state.drain(endTimeNs: $0, deliver)
            }
        }
    }

    /// Turns echo cancellation on or off from the next push on (`EchoCanceller`): on, what
    /// `pushPlayback` hands in is taken out of the pushed microphone audio, by the engine
    /// `setEchoEngine` chose. Turned on again, it starts afresh.
    public func setEchoCancel(_ enabled: Bool) throws(DeskAudioError) {
        try state.withLock { state throws(DeskAudioError) in
            if enabled, state.echo == nil {
                state.echo = try EchoCanceller(engine: try EchoEngine.pick(state.echoChoice))
            } else if !enabled, let echo = state.echo {
                state.retiringEcho = echo  // its audio short of a block goes out with the next push
                state.echo = nil
            }
        }
    }

    /// Chooses the echo canceller (nil, the default: WebRTC's AEC3 where present, else
    /// speexdsp). Throws `.notSupported`, changing nothing, for AEC3 where it cannot run. A
    /// canceller running with another engine starts afresh with this one.
    public func setEchoEngine(_ choice: EchoEngine?) throws(DeskAudioError) {
        let engine = try EchoEngine.pick(choice)
        try state.withLock { state throws(DeskAudioError) in
            state.echoChoice = choice
            guard let echo = state.echo, echo.engine != engine else { return }
            state.echo = try EchoCanceller(engine: engine)
            state.retiringEcho = echo
        }
    }

    /// Takes what the viewer is about to play (as `push` takes PCM), its last frame leaving
    /// the speakers at `endTimeNs` (CLOCK_MONOTONIC; 0: now), as the echo to cancel. Returns
    /// the frames taken: all of them (dropped, once checked, while echo cancellation is off).
    public func pushPlayback(
        _ bytes: UnsafeRawBufferPointer, format: HostPCMInput.SampleFormat, channels: Int32, rate: Int32,
        endTimeNs: UInt64 = 0
    ) throws(DeskAudioError) -> Int {
        try state.withLock { state throws(DeskAudioError) in
            let end = endTimeNs == 0 ? LibraryClock.system.nowNs() : endTimeNs
            guard let echo = state.echo else {
                try HostPCMInput.check(bytes, format: format, channels: channels, rate: rate)
                return bytes.count / (format.bytes * Int(channels))
            }
            return try echo.pushPlayback(bytes, format: format, channels: channels, rate: rate, endTimeNs: end)
        }
    }

    /// Marks a break (the microphone closed and opened again) after the audio pushed so far:
    /// what is pending is dropped, the sample clock moves on past it and `skippedSamples`
    /// (48 kHz) more, and the next frame sent is flagged as after a gap.
    public func markDiscontinuity(skippedSamples: UInt64 = 0) {
        state.withLock { state in
            state.input.reset()
            state.echo?.dropPendingMicrophone()
            state.retiringEcho = nil
            state.pipeline.markDiscontinuity(skippedSamples: skippedSamples)
        }
    }

    /// Sets the bitrate (bit/s) from the next frame on.
    public func setBitrate(_ bitrate: Int32) throws(DeskAudioError) {
        try state.withLock { state throws(DeskAudioError) in try state.pipeline.encoder.setBitrate(bitrate) }
    }

    /// Sets the encoder complexity (0…10) from the next frame on.
    public func setComplexity(_ complexity: Int32) throws(DeskAudioError) {
        try state.withLock { state throws(DeskAudioError) in try state.pipeline.encoder.setComplexity(complexity) }
    }

    /// Turns Opus's in-band forward error correction on or off, tuned for
    /// `expectedLossPercent` (0…100) packet loss, from the next frame on.
    public func setLossProtection(fec: Bool, expectedLossPercent: Int32) throws(DeskAudioError) {
        try state.withLock { state throws(DeskAudioError) in
            try state.pipeline.encoder.setLossProtection(fec: fec, expectedLossPercent: expectedLossPercent)
        }
    }

    /// Counts so far.
    public var counters: Counters {
        let (counts, echo) = state.withLock { ($0.pipeline.counters, $0.echo?.stats) }
        return Counters(
            framesEncoded: counts.framesCaptured, framesSent: counts.framesSent, framesGated: counts.framesGated,
            bytesSent: counts.bytesSent, echo: echo)
    }

    /// What a push works on.
    private final class State {
        let input = HostPCMInput()
        let pipeline: FramePipeline
        let chunk: UnsafeMutableBufferPointer<Float>
        var echo: EchoCanceller?
        // The engine asked for; nil: the best there is.
        var echoChoice: EchoEngine?
        // A canceller turned off, with its audio short of a block still to go out.
        var retiringEcho: EchoCanceller?
        // The capture time of the last microphone sample taken.
        var lastEndTimeNs: UInt64 = 0

        init(pipeline: FramePipeline) {
            self.pipeline = pipeline
            chunk = .allocate(capacity: AudioFormat.frameFloats)
        }

        deinit { chunk.deallocate() }

        /// Frames everything resampled so far; `endTimeNs` is when its last sample was captured.
        func drain(endTimeNs: UInt64, _ deliver: (UnsafeRawBufferPointer) -> Void) {
            func frame(_ audio: UnsafeBufferPointer<Float>, endingAt end: UInt64) {
                pipeline.process(audio, sources: .mic, endTimeNs: end, deliver: deliver)
            }
            retiringEcho?.flush(endTimeNs: lastEndTimeNs, emit: frame)
            retiringEcho = nil
            var left = input.ring.availableFloats
            while left > 0 {
                let count = input.ring.read(into: UnsafeMutableBufferPointer(rebasing: chunk[0..<min(left, chunk.count)]))
                guard count > 0 else { break }
                left -= count
                let chunkEnd = endTimeNs &- MonotonicClock.nanoseconds(ofSamples: UInt64(left / AudioFormat.channels))
                let audio = UnsafeBufferPointer(rebasing: chunk[0..<count])
                lastEndTimeNs = chunkEnd
                if let echo {
                    echo.process(audio, endTimeNs: chunkEnd, emit: frame)
                } else {
                    frame(audio, endingAt: chunkEnd)
                }
            }
        }
    }
}
