import DeskAudio
import Testing

@Suite struct AudioFormatTests {
    @Test func durationsBecomeSamplesToTheNearest() {
        #expect(AudioFormat.samples(inNanoseconds: 0) == 0)
        #expect(AudioFormat.samples(inNanoseconds: 10_416) == 0)  // 0.49997 of a sample
        #expect(AudioFormat.samples(inNanoseconds: 10_417) == 1)  // 0.50002
        #expect(AudioFormat.samples(inNanoseconds: 9_999_999) == 480)
        #expect(AudioFormat.samples(inNanoseconds: 10_000_000) == 480)
        #expect(AudioFormat.samples(inNanoseconds: 1_234_567_890) == 59_259)
    }

    @Test func aMonthsPauseAndTheLargestDurationDoNotOverflow() {
        let month: UInt64 = 30 * 24 * 3600 * 1_000_000_000
        #expect(AudioFormat.samples(inNanoseconds: month) == 30 * 24 * 3600 * 48_000)
        let largest = AudioFormat.samples(inNanoseconds: .max)
        #expect(largest > 885_000_000_000_000 && largest < 886_000_000_000_000)
    }
}
