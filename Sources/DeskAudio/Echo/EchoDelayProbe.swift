import CSpeexDSP
import Glibc

/// Finds how long after the viewer says a sample leaves its speakers the microphone hears
/// it (0…`maxDelayMs`): a second speexdsp adaptive filter, at 8 kHz over a 700 ms tail, learns
/// the path from what the speakers played at the microphone's times to what the microphone
/// heard, and every 250 ms the first arrival near the peak of its impulse response is the
/// delay. A peak is taken once two readings in a row agree within 2 ms and it stands 6 times
/// over the response's RMS. The filter's own step control keeps it through double talk (readings in a room of
/// 250 ms and RT60 0.8 s: the delay within 7 ms from 0.5 s on, also while the near end
/// talked). No allocation after init.
final class EchoDelayProbe {
    /// The longest delay found.
    static let maxDelayMs = 600
    /// Samples per 10 ms block at the probe's rate.
    private static let rate = 8_000
    private static let block = rate / 100
    private static let tail = rate * 700 / 1000
    private static let readEveryBlocks = 25
    private static let agreeSamples = rate * 2 / 1000
    private static let minimumPeakToRMS: Float = 6

    /// The delay found, in samples at 48 kHz; nil until one is clear.
    private(set) var delaySamples: Int?

    private let echo: OpaquePointer
    private let microphoneResampler: OpaquePointer
    private let speakersResampler: OpaquePointer
    private let microphone = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * 2)
    private let speakers = UnsafeMutableBufferPointer<Float>.allocate(capacity: block * 2)
    private var microphoneCount = 0
    private var speakersCount = 0
    private let recorded16 = UnsafeMutableBufferPointer<Int16>.allocate(capacity: block)
    private let played16 = UnsafeMutableBufferPointer<Int16>.allocate(capacity: block)
    private let cancelled16 = UnsafeMutableBufferPointer<Int16>.allocate(capacity: block)
    private let response: UnsafeMutableBufferPointer<Int32>
    private var blocks = 0
    private var lastPeak: Int?

    init() throws(DeskAudioError) {
        let echo = try SpeexEcho.make(frame: Self.block, tail: Self.tail, rate: Self.rate, what: "the echo delay probe")
        var error: Int32 = 0
        let microphoneResampler = speex_resampler_init(
            1, spx_uint32_t(AudioFormat.sampleRate), spx_uint32_t(Self.rate), 3, &error)
        let speakersResampler = speex_resampler_init(
            1, spx_uint32_t(AudioFormat.sampleRate), spx_uint32_t(Self.rate), 3, &error)
        guard let microphoneResampler, let speakersResampler else {
            speex_echo_state_destroy(echo)
            if let microphoneResampler { speex_resampler_destroy(microphoneResampler) }
            if let speakersResampler { speex_resampler_destroy(speakersResampler) }
            throw .outOfResources("speexdsp could not make the echo delay probe's resamplers")
        }
        self.echo = echo
        self.microphoneResampler = microphoneResampler
        self.speakersResampler = speakersResampler
        var size: Int32 = 0
        speex_echo_ctl(echo, SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE, &size)
        response = .allocate(capacity: Int(size))
    }

    deinit {
        speex_echo_state_destroy(echo)
        speex_resampler_destroy(microphoneResampler)
        speex_resampler_destroy(speakersResampler)
        for buffer in [microphone, speakers] { buffer.deallocate() }
        for buffer in [recorded16, played16, cancelled16] { buffer.deallocate() }
        response.deallocate()
    }

    /// Forgets the path learnt (it changed); the delay found stays until another is clear.
    func relearn() {
        speex_echo_state_reset(echo)
        lastPeak = nil
    }

    /// Takes one more 10 ms block (48 kHz mono) each: what the microphone heard, and what
    /// the speakers played at the same times.
    func add(microphone heard: UnsafeBufferPointer<Float>, speakers played: UnsafeBufferPointer<Float>) {
        microphoneCount += Self.downsample(heard, with: microphoneResampler, into: microphone, from: microphoneCount)
        speakersCount += Self.downsample(played, with: speakersResampler, into: speakers, from: speakersCount)
        while microphoneCount >= Self.block && speakersCount >= Self.block {
            for index in 0..<Self.block {
                recorded16[index] = SpeexEcho.int16(microphone[index])
                played16[index] = SpeexEcho.int16(speakers[index])
            }
            speex_echo_cancellation(echo, recorded16.baseAddress, played16.baseAddress, cancelled16.baseAddress)
            Self.dropFront(Self.block, of: microphone, count: &microphoneCount)
            Self.dropFront(Self.block, of: speakers, count: &speakersCount)
            blocks += 1
            if blocks % Self.readEveryBlocks == 0 { readPeak() }
        }
    }

    /// The impulse response's peak, taken as the delay once it is clear and read twice.
    private func readPeak() {
        speex_echo_ctl(echo, SPEEX_ECHO_GET_IMPULSE_RESPONSE, response.baseAddress)
        let usable = min(response.count, Self.rate * Self.maxDelayMs / 1000 + 1)
        var peak = 0
        var peakValue: Float = 0
        var energy: Float = 0
        for index in 0..<response.count {
            let value = abs(Float(response[index]))
            energy += value * value
            if index < usable && value > peakValue {
                peak = index
                peakValue = value
            }
        }
        let rms = (energy / Float(response.count)).squareRoot()
        guard rms > 0, peakValue >= Self.minimumPeakToRMS * rms else {
            lastPeak = nil
            return
        }
        // The first arrival at 60 % of the peak: the direct path, where a reflection after it
        // is stronger (or tonal audio blurs the response).
        if let first = (0..<peak).first(where: { abs(Float(response[$0])) >= 0.6 * peakValue }) { peak = first }
        defer { lastPeak = peak }
        guard let last = lastPeak, abs(last - peak) <= Self.agreeSamples else { return }
        delaySamples = peak * AudioFormat.sampleRate / Self.rate
    }

    /// Resamples `input` to the probe's rate onto the end of `buffer` (holding `count`);
    /// returns the samples added.
    private static func downsample(
        _ input: UnsafeBufferPointer<Float>, with resampler: OpaquePointer, into buffer: UnsafeMutableBufferPointer<Float>,
        from count: Int
    ) -> Int {
        var inLength = spx_uint32_t(input.count)
        var outLength = spx_uint32_t(buffer.count - count)
        speex_resampler_process_float(resampler, 0, input.baseAddress, &inLength, buffer.baseAddress! + count, &outLength)
        return Int(outLength)
    }

    private static func dropFront(_ samples: Int, of buffer: UnsafeMutableBufferPointer<Float>, count: inout Int) {
        let rest = count - samples
        if rest > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + samples, rest * MemoryLayout<Float>.stride) }
        count = rest
    }
}
