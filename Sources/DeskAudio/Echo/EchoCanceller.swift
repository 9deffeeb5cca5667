import DeskAudioShim
import Glibc

/// Which echo canceller an encoder runs.
public enum EchoEngine: Int32, Equatable, Sendable {
    /// speexdsp's adaptive filter and residual echo suppressor, on every system.
    case speexdsp = 1
    /// WebRTC's AEC3, through PipeWire's echo-cancel plugin where PipeWire is built on
    /// webrtc-audio-processing 1.0 or later (Debian 13; not Debian 12's 0.3).
    case webrtcAEC3 = 2

    /// The best there is here: AEC3 where present, else speexdsp.
    public static var best: EchoEngine { WebRTCEcho.unavailableReason == nil ? .webrtcAEC3 : .speexdsp }

    /// The one `choice` names (nil: `best`); throws `.notSupported` for AEC3 where it cannot run.
    static func pick(_ choice: EchoEngine?) throws(DeskAudioError) -> EchoEngine {
        switch choice {
        case .speexdsp?: return .speexdsp
        case .webrtcAEC3?:
            if let reason = WebRTCEcho.unavailableReason { throw .notSupported("WebRTC's AEC3: \(reason)") }
            return .webrtcAEC3
        case nil: return best
        }
    }
}

/// What an encoder's echo canceller knows now (`PCMFrameEncoder.counters`).
public struct EchoStats: Equatable, Sendable {
    /// The canceller that runs.
    public var engine: EchoEngine
    /// The delay found from the speakers' times to the microphone, ms; nil until found.
    public var delayMs: Double?
    /// Echo return loss enhancement over the last second of blocks the speakers played in:
    /// the microphone's level less the result's, dB (lower while the near end talks).
    public var echoReturnLossEnhancementDb: Double
    /// 10 ms blocks cancelled, and of them those with no speaker audio pushed for their
    /// times (pushed too late, or not at all).
    public var blocks: UInt64, blocksWithoutPlayback: UInt64
}

/// Takes the echo of a viewer's speakers out of its microphone, before the microphone's
/// audio is framed and encoded. The viewer pushes what it is about to play with the time
/// it leaves the speakers (`pushPlayback`); each 10 ms of microphone audio, by its capture
/// time, is cancelled against what played then: the acoustic delay past the times given is
/// found from the two signals (`EchoDelayProbe`, up to 600 ms), and the speakers' audio is
/// fed `leadMs` before it to the engine. speexdsp learns the echo's path over a 300 ms tail
/// with its adaptive filter and suppresses what echo is left with its preprocessor (with its
/// noise suppression, which that needs; gain control off); WebRTC's AEC3 finds the rest of
/// the delay itself and suppresses with its own (noise suppression and gain control off).
/// The microphone is cancelled in mono, and both channels carry the result. No allocation
/// per block. One caller at a time (the encoder's lock).
final class EchoCanceller {
    /// The block cancelled at once: 10 ms.
    static let blockSamples = AudioFormat.frameSamples
    /// How far back the adaptive filter reaches from the delay found.
    static let tailMs = 300
    /// The speakers' audio is fed this much before the delay found, so that the echo's
    /// first sound is inside the filter however the delay found is off.
    static let leadMs = 40
    /// Once a delay is applied, another found is applied only where the echo would start
    /// before the filter's reach, or with less than this much of the filter after it; inside
    /// it the filter follows (applying it shifts the speakers' audio, and speexdsp forgets what
    /// it learnt).
    static let keptTailMs = 220

    // The speakers' audio as pushed, resampled to 48 kHz stereo.
    private let playback = HostPCMInput()
    private var reference = PlaybackReference()
    private let probe: EchoDelayProbe
    private let engineState: Engine
    private var appliedDelay: Int?

    /// The canceller's own state.
    private enum Engine {
        case speexdsp(SpeexCanceller)
        case webrtcAEC3(OpaquePointer)

        var kind: EchoEngine {
            switch self {
            case .speexdsp: .speexdsp
            case .webrtcAEC3: .webrtcAEC3
            }
        }
    }

    private let microphone = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSamples)
    private var microphoneCount = 0
    private let speakersThen = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSamples)
    private let speakersFed = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSamples)
    private let stereoScratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: AudioFormat.frameFloats)
    private let cancelled = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockSamples)
    private let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: AudioFormat.frameFloats)

    private var microphonePower = 0.0
    private var resultPower = 0.0
    private var blocks: UInt64 = 0
    private var blocksWithoutPlayback: UInt64 = 0

    // A second of blocks, for the enhancement figure.
    private static let powerMemory = exp(-1.0 / 100)
    // Speakers below -50 dBFS over a block: nothing to cancel.
    private static let playingPower = 1e-5
    private static let nsPerSample = 1e9 / Double(AudioFormat.sampleRate)

    /// A canceller running `engine`.
    init(engine kind: EchoEngine) throws(DeskAudioError) {
        probe = try EchoDelayProbe()
        switch kind {
        case .speexdsp:
            engineState = .speexdsp(
                try SpeexCanceller(
                    blockSamples: Self.blockSamples, tailSamples: Self.tailMs * AudioFormat.sampleRate / 1000,
                    rate: AudioFormat.sampleRate))
        case .webrtcAEC3:
            engineState = .webrtcAEC3(try WebRTCEcho.make())
        }
    }

    deinit {
        if case .webrtcAEC3(let echo) = engineState { deskaudio_webrtc_echo_destroy(echo) }
        reference.deallocate()
        for buffer in [microphone, speakersThen, speakersFed, stereoScratch, output, cancelled] { buffer.deallocate() }
    }

    /// The engine it runs.
    var engine: EchoEngine { engineState.kind }

    var stats: EchoStats {
        EchoStats(
            engine: engineState.kind,
            delayMs: probe.delaySamples.map { Double($0) * 1000 / Double(AudioFormat.sampleRate) },
            echoReturnLossEnhancementDb: resultPower > 0 && microphonePower > 0 ? 10 * log10(microphonePower / resultPower) : 0,
            blocks: blocks, blocksWithoutPlayback: blocksWithoutPlayback)
    }

    /// Takes what the speakers are about to play: as `HostPCMInput.push` takes it, its last
    /// frame leaving the speakers at `endTimeNs`. Returns the frames taken: all of them.
    func pushPlayback(
        _ bytes: UnsafeRawBufferPointer, format: HostPCMInput.SampleFormat, channels: Int32, rate: Int32,
        endTimeNs: UInt64
    ) throws(DeskAudioError) -> Int {
        try playback.pushAll(bytes, format: format, channels: channels, rate: rate, endTimeNs: endTimeNs) { end in
            var left = playback.ring.availableFloats
            while left > 0 {
                let count = playback.ring.read(into: stereoScratch)
                guard count > 0 else { break }
                left -= count
                let samples = count / AudioFormat.channels
                for index in 0..<samples {
                    stereoScratch[index] = (stereoScratch[2 * index] + stereoScratch[2 * index + 1]) / 2
                }
                let chunkEnd = end &- MonotonicClock.nanoseconds(ofSamples: UInt64(left / AudioFormat.channels))
                reference.append(UnsafeBufferPointer(rebasing: stereoScratch[0..<samples]), endTimeNs: chunkEnd)
            }
        }
    }

    /// Takes 48 kHz stereo microphone audio whose last sample was captured at `endTimeNs`,
    /// and hands `emit` each whole 10 ms block cancelled (stereo, with its last sample's
    /// time), valid during the call only.
    func process(
        _ chunk: UnsafeBufferPointer<Float>, endTimeNs: UInt64, emit: (UnsafeBufferPointer<Float>, UInt64) -> Void
    ) {
        let samples = chunk.count / AudioFormat.channels
        for index in 0..<samples {
            microphone[microphoneCount] = (chunk[2 * index] + chunk[2 * index + 1]) / 2
            microphoneCount += 1
            guard microphoneCount == Self.blockSamples else { continue }
            microphoneCount = 0
            let blockEnd = endTimeNs &- UInt64((Double(samples - 1 - index) * Self.nsPerSample).rounded())
            cancelBlock(endingAt: blockEnd)
            emit(UnsafeBufferPointer(output), blockEnd)
        }
    }

    /// Hands `emit` the microphone audio short of a block as it is (cancelling is turned off);
    /// `endTimeNs` is its last sample's capture time.
    func flush(endTimeNs: UInt64, emit: (UnsafeBufferPointer<Float>, UInt64) -> Void) {
        guard microphoneCount > 0 else { return }
        for index in 0..<microphoneCount {
            output[2 * index] = microphone[index]
            output[2 * index + 1] = microphone[index]
        }
        let count = microphoneCount * AudioFormat.channels
        microphoneCount = 0
        emit(UnsafeBufferPointer(rebasing: output[0..<count]), endTimeNs)
    }

    /// Forgets the microphone's pending audio (the microphone broke off); what the speakers
    /// played, the delay and the filter stay.
    func dropPendingMicrophone() { microphoneCount = 0 }

    /// Samples after the speakers' times where the filter's reach begins, with `applied` applied.
    static func reachStart(applied: Int?) -> Int { max((applied ?? 0) - leadMs * AudioFormat.sampleRate / 1000, 0) }

    /// The delay to apply when `found` is found with `applied` applied, nil to keep `applied`:
    /// the first one found, and then one the filter's reach does not hold (`keptTailMs`).
    static func delayToApply(found: Int?, applied: Int?) -> Int? {
        guard let found else { return nil }
        guard applied != nil else { return found }
        let start = reachStart(applied: applied)
        let latest = start + (tailMs - keptTailMs) * AudioFormat.sampleRate / 1000
        return found < start || found > latest ? found : nil
    }

    private func cancelBlock(endingAt blockEnd: UInt64) {
        // What the speakers played at the microphone's times, for the delay.
        reference.read(into: speakersThen, endingAt: blockEnd)
        probe.add(microphone: UnsafeBufferPointer(microphone), speakers: UnsafeBufferPointer(speakersThen))
        // A new alignment: speexdsp's filter learnt the old one. AEC3 follows either.
        if let delay = Self.delayToApply(found: probe.delaySamples, applied: appliedDelay) {
            if case .speexdsp(let speex) = engineState { speex.reset() }
            appliedDelay = delay
        }
        let reach = Self.reachStart(applied: appliedDelay)
        let missing = reference.read(
            into: speakersFed, endingAt: blockEnd &- UInt64((Double(reach) * Self.nsPerSample).rounded()))
        blocks += 1
        if missing == Self.blockSamples { blocksWithoutPlayback += 1 }

        var micEnergy = 0.0
        var speakerEnergy = 0.0
        for index in 0..<Self.blockSamples {
            micEnergy += Double(microphone[index]) * Double(microphone[index])
            speakerEnergy += Double(speakersFed[index]) * Double(speakersFed[index])
        }
        let speakersPlayed = speakerEnergy / Double(Self.blockSamples) > Self.playingPower
        switch engineState {
        case .speexdsp(let speex):
            // A path no longer there: the delay is learnt afresh with the filter.
            if speex.cancel(
                microphone: UnsafeBufferPointer(microphone), speakers: UnsafeBufferPointer(speakersFed), into: cancelled,
                microphoneEnergy: micEnergy, speakersPlayed: speakersPlayed)
            {
                probe.relearn()
            }
        case .webrtcAEC3(let echo):
            if deskaudio_webrtc_echo_run(
                echo, microphone.baseAddress, speakersFed.baseAddress, cancelled.baseAddress, UInt32(Self.blockSamples)) < 0
            {
                _ = cancelled.update(fromContentsOf: microphone)  // not 10 ms: never, as called here
            }
        }
        var resultEnergy = 0.0
        for index in 0..<Self.blockSamples {
            let sample = cancelled[index]
            resultEnergy += Double(sample) * Double(sample)
            output[2 * index] = sample
            output[2 * index + 1] = sample
        }
        if speakersPlayed {
            let memory = Self.powerMemory
            microphonePower = memory * microphonePower + (1 - memory) * micEnergy
            resultPower = memory * resultPower + (1 - memory) * max(resultEnergy, 1e-12)
        }
    }
}
