import DeskAudio
import Testing

@Suite struct AudioFormatTests {
    @Test func durationsBecomeWholeFramesOfSamples() {
        #expect(AudioFormat.wholeFrameSamples(inNanoseconds: 0) == 0)
        #expect(AudioFormat.wholeFrameSamples(inNanoseconds: 9_999_999) == 0)
        #expect(AudioFormat.wholeFrameSamples(inNanoseconds: 10_000_000) == 480)
        #expect(AudioFormat.wholeFrameSamples(inNanoseconds: 1_234_567_890) == 59_040)
    }

    @Test func aMonthsPauseAndTheLargestDurationDoNotOverflow() {
        let month: UInt64 = 30 * 24 * 3600 * 1_000_000_000
        #expect(AudioFormat.wholeFrameSamples(inNanoseconds: month) == 30 * 24 * 3600 * 48_000)
        let largest = AudioFormat.wholeFrameSamples(inNanoseconds: .max)
        #expect(largest % 480 == 0 && largest > 885_000_000_000_000)
    }
}
