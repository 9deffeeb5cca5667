import Testing

@testable import DeskAudio

/// A cycle of exact zeros alone between two of sound is counted (what PipeWire 0.3.65 hands
/// one consumer of a monitor now and then); silences longer than a cycle, the sound's start
/// and end, and zeros next to a break are not.
@Suite struct PipeWireZeroCycleWatchTests {
    /// The watch's answers for a run of 256-sample stereo buffers, "s" sound, "0" zeros, "k" a
    /// buffer of sound after cycles missed, "=" zeros for the cycle before, handed again.
    static func answers(_ buffers: String) -> [Bool] {
        var watch = PipeWireZeroCycleWatch()
        let sound = [Float](repeating: 0, count: 511) + [0.25]  // one sample not zero is sound
        let zeros = [Float](repeating: 0, count: 512)
        return buffers.map { kind in
            (kind == "0" || kind == "=" ? zeros : sound).withUnsafeBufferPointer {
                watch.take($0, skipped: kind == "k" ? 256 : 0, again: kind == "=")
            }
        }
    }

    @Test func oneCycleOfZerosBetweenSoundIsCountedOnceTheSoundGoesOn() {
        #expect(Self.answers("s0s") == [false, false, true])
        #expect(Self.answers("s0s0ss") == [false, false, true, false, true, false])
    }

    @Test func longerSilencesAndTheSoundsEdgesAreNotCounted() {
        #expect(!Self.answers("s00s").contains(true))
        #expect(!Self.answers("0s").contains(true))
        #expect(!Self.answers("s0").contains(true))
        #expect(!Self.answers("ssss").contains(true))
    }

    @Test func zerosNextToABreakAreNotCounted() {
        #expect(!Self.answers("s0k").contains(true))  // the zeros' cycle may be the break's
        #expect(Self.answers("k0s") == [false, false, true])  // sound after a break, then a lone cycle
    }

    /// The double call of debian12-pipewire-graph-late (R-PW-DOUBLE-CALL): sound after a
    /// cycle missed, the same cycle again as zeros, then sound: no cycle of zeros was handed.
    @Test func zerosForACycleHandedAgainAreNoCycleOfTheirOwn() {
        #expect(!Self.answers("sk=ss").contains(true))
        #expect(Self.answers("s=0s") == [false, false, false, true])
    }

    @Test func aNewStreamStartsFromNothing() {
        var watch = PipeWireZeroCycleWatch()
        let sound = [Float](repeating: 0.5, count: 512)
        let zeros = [Float](repeating: 0, count: 512)
        _ = sound.withUnsafeBufferPointer { watch.take($0, skipped: 0) }
        _ = zeros.withUnsafeBufferPointer { watch.take($0, skipped: 0) }
        watch.reset()
        #expect(!sound.withUnsafeBufferPointer { watch.take($0, skipped: 0) })
    }
}
