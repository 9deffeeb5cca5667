import Testing

@testable import DeskAudio

/// Buffers of exact zeros alone between sound are counted when they are one cycle, or a run
/// of cycles lasting at most `TimingPolicy.serverZeroRunLongestSamples` (what PipeWire 0.3.65
/// hands one consumer of a monitor now and then: one 256-sample cycle, two of 128); longer
/// silences, the sound's start and end, and zeros next to a break are not.
@Suite struct PipeWireZeroCycleWatchTests {
    /// The watch's answers for a run of stereo buffers of `quantum` samples, "s" sound, "0"
    /// zeros, "k" a buffer of sound after cycles missed, "=" zeros for the cycle before,
    /// handed again.
    static func answers(_ buffers: String, quantum: Int = 256) -> [Int] {
        var watch = PipeWireZeroCycleWatch()
        let sound = [Float](repeating: 0, count: 2 * quantum - 1) + [0.25]  // one sample not zero is sound
        let zeros = [Float](repeating: 0, count: 2 * quantum)
        return buffers.map { kind in
            (kind == "0" || kind == "=" ? zeros : sound).withUnsafeBufferPointer {
                watch.take($0, channels: 2, skipped: kind == "k" ? quantum : 0, again: kind == "=")
            }
        }
    }

    @Test func oneCycleOfZerosBetweenSoundIsCountedOnceTheSoundGoesOn() {
        #expect(Self.answers("s0s") == [0, 0, 1])
        #expect(Self.answers("s0s0ss") == [0, 0, 1, 0, 1, 0])
        #expect(Self.answers("s0s", quantum: 1024) == [0, 0, 1], "one cycle, however long")
    }

    /// The run of two 128-sample cycles inside a tone that a clean-clone run's capture trace
    /// showed (2.5 ms frames, the graph's position going on a quantum a buffer).
    @Test func aRunOfShortCyclesAsLongAsOneOfTheRigsIsCountedCycleByCycle() {
        #expect(Self.answers("s00s", quantum: 128) == [0, 0, 0, 2])
        #expect(Self.answers("s0000s", quantum: 64) == [0, 0, 0, 0, 0, 4])
    }

    @Test func longerSilencesAndTheSoundsEdgesAreNotCounted() {
        #expect(Self.answers("s00s") == [0, 0, 0, 0], "two 256-sample cycles: a pause")
        #expect(Self.answers("s000s", quantum: 128) == [0, 0, 0, 0, 0], "three of 128")
        #expect(Self.answers("s00000s", quantum: 64) == [0, 0, 0, 0, 0, 0, 0], "five of 64")
        #expect(Self.answers("0s") == [0, 0])
        #expect(Self.answers("s0") == [0, 0])
        #expect(Self.answers("ssss") == [0, 0, 0, 0])
    }

    @Test func zerosNextToABreakAreNotCounted() {
        #expect(Self.answers("s0k") == [0, 0, 0])  // the zeros' cycle may be the break's
        #expect(Self.answers("k0s") == [0, 0, 1])  // sound after a break, then a lone cycle
        #expect(Self.answers("s0k0s", quantum: 128) == [0, 0, 0, 0, 1], "a run does not reach over a break")
    }

    /// The double call of debian12-pipewire-graph-late (R-PW-DOUBLE-CALL): sound after a
    /// cycle missed, the same cycle again as zeros, then sound: no cycle of zeros was handed.
    @Test func zerosForACycleHandedAgainAreNoCycleOfTheirOwn() {
        #expect(Self.answers("sk=ss") == [0, 0, 0, 0, 0])
        #expect(Self.answers("s=0s") == [0, 0, 0, 1])
        #expect(Self.answers("s0=0s", quantum: 128) == [0, 0, 0, 0, 2], "the cycle handed again is not in the run")
    }

    @Test func aNewStreamStartsFromNothing() {
        var watch = PipeWireZeroCycleWatch()
        let sound = [Float](repeating: 0.5, count: 512)
        let zeros = [Float](repeating: 0, count: 512)
        _ = sound.withUnsafeBufferPointer { watch.take($0, channels: 2, skipped: 0) }
        _ = zeros.withUnsafeBufferPointer { watch.take($0, channels: 2, skipped: 0) }
        watch.reset()
        #expect(sound.withUnsafeBufferPointer { watch.take($0, channels: 2, skipped: 0) } == 0)
    }
}
