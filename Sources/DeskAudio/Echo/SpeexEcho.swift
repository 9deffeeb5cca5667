import CSpeexDSP

/// speexdsp's echo canceller, as both of the library's are made and fed.
enum SpeexEcho {
    /// A canceller state for blocks of `frame` samples over a filter of `tail` samples at
    /// `rate` Hz; `what` names it in the error.
    static func make(frame: Int, tail: Int, rate: Int, what: String) throws(DeskAudioError) -> OpaquePointer {
        guard let state = speex_echo_state_init(Int32(frame), Int32(tail)) else {
            throw .outOfResources("speexdsp could not make \(what)")
        }
        var rate = Int32(rate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        return state
    }

    /// A float sample (nominally within ±1) as the 16-bit sample speexdsp takes, clipped.
    static func int16(_ sample: Float) -> Int16 {
        Int16(max(min(sample * 32768, 32767), -32768).rounded())
    }
}
