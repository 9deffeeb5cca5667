@testable import DeskAudioCLI
import Testing

struct SequenceCountTests {
    private func lost(_ sequences: [UInt32]) -> UInt64 {
        var count = SequenceCount()
        for sequence in sequences { count.note(sequence) }
        return count.lost
    }

    @Test func gapsBetweenTheOldestAndTheNewestAreLost() {
        #expect(lost([]) == 0)
        #expect(lost([5, 6, 7]) == 0)
        #expect(lost([5, 7, 10]) == 3)
    }

    /// Frames overtaken on the way, at the start as well as in the middle, are not lost.
    @Test func framesThatArriveOutOfOrderAreNotLost() {
        #expect(lost([2, 0, 1, 3, 5, 4]) == 0)
        #expect(lost([2, 1, 4]) == 1)
        #expect(lost([3, 0, 5]) == 3)
    }

    @Test func aRepeatedFrameMakesUpForOneLost() {
        #expect(lost([0, 1, 1, 3]) == 0)
    }

    @Test func aSenderThatStartedOverKeepsTheLossCountedBefore() {
        #expect(lost([0, 2, 50_000, 50_001, 50_003]) == 2)
        #expect(lost([UInt32.max - 1, 1]) == 2)
    }
}
