import CSpeexDSP

/// speexdsp's adaptive filter and residual echo suppressor over mono blocks: the engine
/// `EchoCanceller` runs where WebRTC's AEC3 does not. No allocation per block.
final class SpeexCanceller {
    private let blockSamples: Int
    private let echo: OpaquePointer
    private let preprocess: OpaquePointer
    private let recorded16: UnsafeMutableBufferPointer<Int16>
    private let played16: UnsafeMutableBufferPointer<Int16>
    private let cancelled16: UnsafeMutableBufferPointer<Int16>

    // Over the blocks the speakers played in since the last look: the microphone's energy
    // and the adaptive filter's output's (before the suppressor).
    private var windowBlocks = 0
    private var windowMicrophone = 0.0
    private var windowFiltered = 0.0
    // Half a second of 10 ms blocks the speakers played in, and the rise over the
    // microphone's energy in it, 1 dB, at which the filter's output shows a path that is no
    // longer there.
    private static let windowLength = 50
    private static let wrongPathRatio = 1.26

    /// A canceller of `blockSamples`-sample blocks at `rate` Hz whose filter reaches `tailSamples` back.
    init(blockSamples: Int, tailSamples: Int, rate: Int) throws(DeskAudioError) {
        let echo = try SpeexEcho.make(frame: blockSamples, tail: tailSamples, rate: rate, what: "an echo canceller")
        guard let preprocess = speex_preprocess_state_init(Int32(blockSamples), Int32(rate)) else {
            speex_echo_state_destroy(echo)
            throw .outOfResources("speexdsp could not make a preprocessor")
        }
        // Its residual echo suppression works through its noise suppressor's gains, so that
        // stays on (at its -15 dB); gain control stays off.
        var off: Int32 = 0
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_AGC, &off)
        speex_preprocess_ctl(preprocess, SPEEX_PREPROCESS_SET_ECHO_STATE, UnsafeMutableRawPointer(echo))
        self.blockSamples = blockSamples
        self.echo = echo
        self.preprocess = preprocess
        recorded16 = .allocate(capacity: blockSamples)
        played16 = .allocate(capacity: blockSamples)
        cancelled16 = .allocate(capacity: blockSamples)
    }

    deinit {
        speex_preprocess_state_destroy(preprocess)
        speex_echo_state_destroy(echo)
        for buffer in [recorded16, played16, cancelled16] { buffer.deallocate() }
    }

    /// Forgets the echo's path learnt (the delay in front of it changed).
    func reset() { speex_echo_state_reset(echo) }

    /// Cancels one block of `microphone` against what the `speakers` played into it, into
    /// `result` (each `blockSamples` long). Returns true when the filter had learnt a path
    /// that is no longer there and has started afresh: the delay in front of it should be
    /// learnt afresh too.
    func cancel(
        microphone: UnsafeBufferPointer<Float>, speakers: UnsafeBufferPointer<Float>,
        into result: UnsafeMutableBufferPointer<Float>, microphoneEnergy: Double, speakersPlayed: Bool
    ) -> Bool {
        for index in 0..<blockSamples {
            recorded16[index] = SpeexEcho.int16(microphone[index])
            played16[index] = SpeexEcho.int16(speakers[index])
        }
        speex_echo_cancellation(echo, recorded16.baseAddress, played16.baseAddress, cancelled16.baseAddress)
        var wrongPath = false
        if speakersPlayed {
            var filteredEnergy = 0.0
            for sample in cancelled16 { filteredEnergy += Double(sample) * Double(sample) / (32768 * 32768) }
            wrongPath = watchForAWrongPath(microphoneEnergy: microphoneEnergy, filteredEnergy: filteredEnergy)
        }
        speex_preprocess_run(preprocess, cancelled16.baseAddress)
        for index in 0..<blockSamples { result[index] = Float(cancelled16[index]) / 32768 }
        return wrongPath
    }

    /// A filter that takes out what is no longer there adds it: its output louder than the
    /// microphone over half a second the speakers played in (a filter that fits takes energy
    /// out, in double talk too). The filter then learns afresh (the room changed: a laptop
    /// moved, a headset taken off).
    private func watchForAWrongPath(microphoneEnergy: Double, filteredEnergy: Double) -> Bool {
        windowBlocks += 1
        windowMicrophone += microphoneEnergy
        windowFiltered += filteredEnergy
        guard windowBlocks == Self.windowLength else { return false }
        let wrong = windowFiltered > Self.wrongPathRatio * windowMicrophone
        if wrong { reset() }
        windowBlocks = 0
        windowMicrophone = 0
        windowFiltered = 0
        return wrong
    }
}
