// Per-frame cost of DeskAudio's pipeline, against libopus alone, with heap allocations
// counted by the benchmark package's malloc interposer. One iteration is one frame: 10 ms
// unless the name gives another length (compare those per second of audio: 2 × per 5 ms).
// The harness itself allocates a fixed few blocks per iteration: "harness floor" measures
// them with an empty iteration, and a benchmark that allocates nothing per frame shows
// exactly that floor.
import Benchmark
import Glibc
import DeskAudio
import RawOpus

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .instructions],
        warmupIterations: 200,
        maxDuration: .seconds(4),
        maxIterations: 20_000
    )

    Benchmark("harness floor (empty iteration)") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(0) }
    }

    Benchmark("pipeline: captured buffer to AudioFrame (app)") { benchmark in
        for _ in benchmark.scaledIterations { appPipeline.captureAndSend() }
    }

    Benchmark("pipeline: captured buffer to AudioFrame (app, 5 ms frames)") { benchmark in
        for _ in benchmark.scaledIterations { appPipeline5ms.captureAndSend() }
    }

    Benchmark("pipeline: captured buffer to AudioFrame (app, 2.5 ms frames)") { benchmark in
        for _ in benchmark.scaledIterations { appPipeline2_5ms.captureAndSend() }
    }

    Benchmark("pipeline: 5.1 PCM to AudioFrame (framer, gate, surround encoder, version 2 header)") { benchmark in
        for _ in benchmark.scaledIterations { surround51.encodeNext() }
    }

    Benchmark("pipeline: 7.1 PCM to AudioFrame (framer, gate, surround encoder, version 2 header)") { benchmark in
        for _ in benchmark.scaledIterations { surround71.encodeNext() }
    }

    Benchmark("raw opus at 5.1: opus_multistream_encode_float, same input and settings") { benchmark in
        for _ in benchmark.scaledIterations { rawSurround51.encodeNext() }
    }

    Benchmark("raw opus at 7.1: opus_multistream_encode_float, same input and settings") { benchmark in
        for _ in benchmark.scaledIterations { rawSurround71.encodeNext() }
    }

    Benchmark("pipeline: captured buffers to AudioFrame (app + mic mixed)") { benchmark in
        for _ in benchmark.scaledIterations { mixedPipeline.captureAndSend() }
    }

    Benchmark("pipeline: captured buffers to AudioFrame (4 sources mixed)") { benchmark in
        for _ in benchmark.scaledIterations { fourSourcePipeline.captureAndSend() }
    }

    Benchmark("pipeline: viewer PCM, s16 mono 16 kHz, to AudioFrame (deskaudio_encoder)") { benchmark in
        for _ in benchmark.scaledIterations { viewerEncoder.pushNext() }
    }

    Benchmark("pipeline: viewer PCM with echo cancellation (speexdsp), its 10 ms of playback pushed too") { benchmark in
        for _ in benchmark.scaledIterations { echoCancellingEncoder.pushNext() }
    }

    Benchmark("pipeline: receiving, AudioFrame into the jitter buffer and 10 ms out (decoded)") { benchmark in
        for _ in benchmark.scaledIterations { jitterFixture.insertAndPull() }
    }

    Benchmark("mixer alone: 4 rings written and mixed (no meter, no encoder)") { benchmark in
        for _ in benchmark.scaledIterations { mixFixture.writeAndMix() }
    }

    Benchmark("raw opus_encode_float, same input and settings") { benchmark in
        for _ in benchmark.scaledIterations { rawEncoder.encodeNext() }
    }

    Benchmark("raw opus at 5 ms frames: opus_encode_float, same input and settings") { benchmark in
        for _ in benchmark.scaledIterations { rawEncoder5ms.encodeNext() }
    }

    Benchmark("raw opus at 2.5 ms frames: opus_encode_float, same input and settings") { benchmark in
        for _ in benchmark.scaledIterations { rawEncoder2_5ms.encodeNext() }
    }

    Benchmark("framer alone") { benchmark in
        for _ in benchmark.scaledIterations { framerFixture.appendOneFrame() }
    }

    Benchmark("zero gate alone (all-zero frame: full scan)") { benchmark in
        for _ in benchmark.scaledIterations { gateFixture.decide() }
    }

    Benchmark("AudioFrame serializer alone (36-byte header)") { benchmark in
        for _ in benchmark.scaledIterations { serializerFixture.write() }
    }

    Benchmark("level meter alone (one 10 ms buffer)") { benchmark in
        for _ in benchmark.scaledIterations { meterFixture.measureOneFrame() }
    }
}

/// One second of a 1 kHz tone at -12 dBFS plus white noise at about -30 dBFS, interleaved
/// stereo: enough texture that the encoder works as it does on real audio.
let testSignal: [Float] = {
    var state: UInt32 = 12345
    return (0..<AudioFormat.sampleRate * AudioFormat.channels).map { index in
        state = state &* 1_664_525 &+ 1_013_904_223
        let noise = (Float(state >> 8) / Float(1 << 24) - 0.5) * 0.06
        let time = Float(index / 2) / Float(AudioFormat.sampleRate)
        return 0.25 * sinf(2 * .pi * 1000 * time) + noise
    }
}()

/// Walks through `testSignal` in consecutive pieces, back to `restart` whenever the next
/// piece would run past its end.
struct SignalCursor {
    private let signal: [Float]
    private let restart: Int
    private var offset: Int

    /// A cursor over `signal` (default: the test signal) from `start`.
    init(from start: Int = 0, over signal: [Float] = testSignal) {
        self.signal = signal
        restart = start
        offset = start
    }

    /// Hands `body` the next `floats` interleaved floats of the test signal.
    mutating func next<Result>(_ floats: Int, _ body: (UnsafeBufferPointer<Float>) -> Result) -> Result {
        if offset + floats > signal.count { offset = restart }
        defer { offset += floats }
        return signal.withUnsafeBufferPointer { signal in
            body(UnsafeBufferPointer(rebasing: signal[offset..<offset + floats]))
        }
    }
}

/// The capture side as the library runs it: each source's server thread meters its buffer,
/// reports its server time to the source's clock loop (ClockEstimator) and writes it into the
/// source's ring, the worker lists the rings (MixerInputs, as the capture's slots do), pulls
/// them through the mixer, stamps the chunk from the first source's clock line and runs it
/// through the pipeline, the frame is handed on.
/// Each of N sources carries the test signal at 1/N, so the mix the encoder gets is the test
/// signal itself and the comparison with libopus alone measures the mixing, not a louder input.
final class PipelineFixture {
    private let rings: [SampleRing]
    private let levels: [LevelMeter]
    private var clocks: [ClockEstimator]
    private var serverTimeNs: UInt64 = 1_000_000_000
    private let inputs = MixerInputs()
    private let mixer = SourceMixer()
    private let pipeline: FramePipeline
    private let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8192)
    private let duration: FrameDuration
    private var signal: SignalCursor
    private(set) var bytesSent = 0

    /// `sources` sources, each delivering the test signal at 1/`sources`, cut into frames
    /// of `duration`; each server buffer is one frame long.
    init(sources: Int, duration: FrameDuration = .ms10) {
        self.duration = duration
        pipeline = FramePipeline(encoder: try! OpusFrameEncoder(), frameDuration: duration)
        signal = SignalCursor(over: testSignal.map { $0 / Float(sources) })
        rings = (0..<sources).map { _ in SampleRing(minimumFloats: 48_000) }
        levels = (0..<sources).map { _ in LevelMeter() }
        clocks = (0..<sources).map { _ in ClockEstimator() }
        // Half a frame first, so every later buffer straddles two frames.
        write(floats: duration.floats / 2)
        captureAndSend()
    }

    /// One frame-long buffer from each source's server, through to the host's callback.
    func captureAndSend() {
        write(floats: duration.floats)
        inputs.removeAll()
        for (slot, ring) in rings.enumerated() { inputs.append(ring, flags: slot == 1 ? .mic : .app, slot: slot) }
        let (floats, sources) = mixer.pull(inputs, into: scratch)
        let line = clocks[0].line!
        let endNs = line.timeNs(ofPosition: Int64(rings[0].readFloats / AudioFormat.channels))
        pipeline.process(
            UnsafeBufferPointer(rebasing: scratch[0..<floats]), sources: sources, endTimeNs: UInt64(endNs),
            nanosecondsPerSample: line.nanosecondsPerSample
        ) { frame in bytesSent &+= frame.count }
    }

    private func write(floats: Int) {
        signal.next(floats) { chunk in
            for index in rings.indices {
                levels[index].measure(chunk)
                clocks[index].report(
                    position: Int64(rings[index].writtenFloats / AudioFormat.channels), timeNs: serverTimeNs)
                _ = rings[index].write(chunk)
            }
        }
        serverTimeNs += MonotonicClock.nanoseconds(ofSamples: UInt64(floats / AudioFormat.channels))
    }
}

/// The mixing part of four sources alone: each 10 ms buffer written into its ring, the
/// rings pulled through the mixer (what the 4-source pipeline adds besides its meters).
final class MixFixture {
    private let rings = (0..<4).map { _ in SampleRing(minimumFloats: 48_000) }
    private let inputs = MixerInputs()
    private let mixer = SourceMixer()
    private let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 8192)
    private var signal = SignalCursor(over: testSignal.map { $0 / 4 })
    private(set) var floats = 0

    func writeAndMix() {
        signal.next(AudioFormat.frameFloats) { chunk in
            for ring in rings { _ = ring.write(chunk) }
        }
        inputs.removeAll()
        for (slot, ring) in rings.enumerated() { inputs.append(ring, flags: .app, slot: slot) }
        floats &+= mixer.pull(inputs, into: scratch).floats
    }
}

/// libopus alone, set up as the pipeline's encoder, on the same signal.
final class RawEncoderFixture {
    private let encoder = raw_opus_encoder_create(OpusFrameEncoder.defaultBitrate, 10)!
    private let packet = UnsafeMutablePointer<UInt8>.allocate(capacity: OpusFrameEncoder.maxPacketBytes)
    private let duration: FrameDuration
    private var signal = SignalCursor()
    private(set) var bytesOut = 0

    /// Encodes frames of `duration`.
    init(duration: FrameDuration = .ms10) { self.duration = duration }

    func encodeNext() {
        let length = signal.next(duration.floats) { frame in
            opus_encode_float(
                encoder, frame.baseAddress!, Int32(duration.samples), packet,
                Int32(OpusFrameEncoder.maxPacketBytes))
        }
        bytesOut &+= Int(length)
    }
}

final class FramerFixture {
    private var framer = Framer()
    private var signal = SignalCursor(from: AudioFormat.frameFloats / 2)
    private(set) var frames = 0

    func appendOneFrame() {
        signal.next(AudioFormat.frameFloats) { buffer in
            framer.append(buffer) { _ in frames &+= 1 }
        }
    }
}

final class GateFixture {
    private var gate = ZeroGate()
    private let zeros = [Float](repeating: 0, count: AudioFormat.frameFloats)
    private(set) var held = 0

    func decide() {
        let decision = zeros.withUnsafeBufferPointer { gate.decide($0) }
        if decision == .hold { held &+= 1 }
    }
}

final class SerializerFixture {
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: AudioFrameWriter.maxFrameBytes, alignment: 8)
    private var sequence: UInt32 = 0

    func write() {
        sequence &+= 1
        let header = AudioFrameHeader(
            flags: [.app], sequence: sequence, sampleClock: UInt64(sequence) * 480,
            captureTimeNs: UInt64(sequence) * 10_000_000, payloadLength: 160)
        AudioFrameWriter.write(header, into: buffer)
    }
}

/// The capture thread's meter, on the 10 ms buffers of the test signal.
final class MeterFixture {
    private let meter = LevelMeter()
    private var signal = SignalCursor()

    func measureOneFrame() {
        signal.next(AudioFormat.frameFloats) { meter.measure($0) }
    }
}

nonisolated(unsafe) let appPipeline = PipelineFixture(sources: 1)
nonisolated(unsafe) let appPipeline5ms = PipelineFixture(sources: 1, duration: .ms5)
nonisolated(unsafe) let appPipeline2_5ms = PipelineFixture(sources: 1, duration: .ms2_5)
nonisolated(unsafe) let mixedPipeline = PipelineFixture(sources: 2)
nonisolated(unsafe) let fourSourcePipeline = PipelineFixture(sources: 4)
nonisolated(unsafe) let viewerEncoder = ViewerEncoderFixture()
nonisolated(unsafe) let echoCancellingEncoder = ViewerEncoderFixture(echoCancel: true)
nonisolated(unsafe) let jitterFixture = JitterFixture()
nonisolated(unsafe) let rawEncoder = RawEncoderFixture()
nonisolated(unsafe) let rawEncoder5ms = RawEncoderFixture(duration: .ms5)
nonisolated(unsafe) let rawEncoder2_5ms = RawEncoderFixture(duration: .ms2_5)
nonisolated(unsafe) let mixFixture = MixFixture()
nonisolated(unsafe) let surround51 = SurroundFixture(.surround51)
nonisolated(unsafe) let surround71 = SurroundFixture(.surround71)
nonisolated(unsafe) let rawSurround51 = RawSurroundFixture(.surround51)
nonisolated(unsafe) let rawSurround71 = RawSurroundFixture(.surround71)
nonisolated(unsafe) let framerFixture = FramerFixture()
nonisolated(unsafe) let gateFixture = GateFixture()
nonisolated(unsafe) let serializerFixture = SerializerFixture()
nonisolated(unsafe) let meterFixture = MeterFixture()

/// The viewer's side: 10 ms of a microphone's s16 mono 16 kHz PCM pushed into a
/// PCMFrameEncoder (resampled by speexdsp, framed, gated, encoded) per iteration.
final class ViewerEncoderFixture {
    private let encoder = try! PCMFrameEncoder()
    // The test signal's left channel, every third sample: one second at 16 kHz.
    private let pcm: [Int16] = stride(from: 0, to: testSignal.count, by: 6).map { Int16(testSignal[$0] * 32767) }
    private var offset = 0
    private let echoCancel: Bool
    // Times on a 10 ms step: the playback pushed 40 ms before the microphone hears it.
    private var timeNs: UInt64 = 1_000_000_000_000

    /// With `echoCancel`, each iteration also pushes 10 ms of playback (the same signal, as
    /// a viewer plays the host) and the microphone's audio is cancelled against it.
    init(echoCancel: Bool = false) {
        self.echoCancel = echoCancel
        if echoCancel { try! encoder.setEchoCancel(true) }
    }

    func pushNext() {
        if offset + 160 > pcm.count { offset = 0 }
        defer {
            offset += 160
            timeNs += 10_000_000
        }
        pcm.withUnsafeBytes { bytes in
            let piece = UnsafeRawBufferPointer(rebasing: bytes[(offset * 2)..<((offset + 160) * 2)])
            if echoCancel {
                _ = try! encoder.pushPlayback(piece, format: .s16, channels: 1, rate: 16_000, endTimeNs: timeNs + 40_000_000)
            }
            _ = try! encoder.push(piece, format: .s16, channels: 1, rate: 16_000, endTimeNs: timeNs) { blackHole($0.count) }
        }
    }
}

/// The receiving side: one AudioFrame (of the test signal, encoded once) inserted into a
/// JitterBuffer as it arrives every 10 ms, and 10 ms pulled out (decoded), per iteration.
final class JitterFixture {
    private let buffer = try! JitterBuffer()
    private let frames: [[UInt8]]
    private let frame = UnsafeMutableRawBufferPointer.allocate(byteCount: AudioFrameWriter.maxFrameBytes, alignment: 8)
    private let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: AudioFormat.frameFloats)
    private var sequence: UInt32 = 0

    init() {
        let pipeline = FramePipeline(encoder: try! OpusFrameEncoder())
        var encoded: [[UInt8]] = []
        testSignal.withUnsafeBufferPointer { signal in
            pipeline.process(signal, sources: [.mic], endTimeNs: 1_000_000_000) { encoded.append(Array($0)) }
        }
        frames = encoded
    }

    func insertAndPull() {
        let source = frames[Int(sequence) % frames.count]
        source.withUnsafeBytes { frame.copyMemory(from: $0) }
        // Sequence and capture time run on, as from a sender that keeps sending.
        frame.storeBytes(of: sequence.littleEndian, toByteOffset: AudioFrameHeader.Offset.sequence, as: UInt32.self)
        let time = UInt64(sequence) * 10_000_000
        frame.storeBytes(of: time.littleEndian, toByteOffset: AudioFrameHeader.Offset.captureTime, as: UInt64.self)
        try! buffer.insert(UnsafeRawBufferPointer(rebasing: frame[0..<source.count]), arrivalNs: time + 5_000_000)
        blackHole(buffer.pull(into: output, nowNs: time + 5_000_000))
        sequence &+= 1
    }
}

/// A surround signal: the test signal's left channel in every channel, each at its own gain
/// (so the channels differ), 1 s, interleaved in `layout`'s order.
func surroundSignal(_ layout: ChannelLayout) -> [Float] {
    let samples = AudioFormat.sampleRate
    var signal = [Float](repeating: 0, count: samples * layout.channels)
    for sample in 0..<samples {
        for channel in 0..<layout.channels {
            signal[sample * layout.channels + channel] = testSignal[sample * 2] * (1 - Float(channel) * 0.08)
        }
    }
    return signal
}

/// 10 ms of surround PCM, one buffer per frame, through a pipeline encoding `layout`.
final class SurroundFixture {
    private let pipeline: FramePipeline
    private let floats: Int
    private var signal: SignalCursor
    private(set) var bytesSent = 0

    init(_ layout: ChannelLayout) {
        pipeline = FramePipeline(encoder: try! OpusFrameEncoder(layout: layout))
        floats = FrameDuration.ms10.samples * layout.channels
        signal = SignalCursor(over: surroundSignal(layout))
    }

    func encodeNext() {
        signal.next(floats) { buffer in
            pipeline.process(buffer, endTimeNs: 0) { frame in bytesSent &+= frame.count }
        }
    }
}

/// libopus's surround encoder alone, on the same signal already in Vorbis order.
final class RawSurroundFixture {
    private let encoder: OpaquePointer
    private let packet = UnsafeMutablePointer<UInt8>.allocate(capacity: 8 * OpusFrameEncoder.maxPacketBytes)
    private let floats: Int
    private var signal: SignalCursor
    private(set) var bytesOut = 0

    init(_ layout: ChannelLayout) {
        encoder = raw_opus_surround_encoder_create(
            Int32(layout.channels), OpusFrameEncoder.defaultBitrate(for: layout), 10)!
        floats = FrameDuration.ms10.samples * layout.channels
        let order = layout.vorbisIndex
        let source = surroundSignal(layout)
        var vorbis = source
        for sample in 0..<AudioFormat.sampleRate {
            for channel in 0..<layout.channels {
                vorbis[sample * layout.channels + order[channel]] = source[sample * layout.channels + channel]
            }
        }
        signal = SignalCursor(over: vorbis)
    }

    func encodeNext() {
        let length = signal.next(floats) { frame in
            opus_multistream_encode_float(
                encoder, frame.baseAddress!, Int32(FrameDuration.ms10.samples), packet,
                Int32(8 * OpusFrameEncoder.maxPacketBytes))
        }
        bytesOut &+= Int(length)
    }
}
