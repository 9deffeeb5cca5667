@testable import DeskAudio
import Testing

/// The path latency PulseAudio capture times are worked back by: the least of the last two
/// to four seconds, so that one timing update with a stretched transport makes no capture
/// time early.
@Suite struct PulsePathFloorTests {
    static let second: UInt64 = 1_000_000_000

    @Test func aStretchedPathIsNotTakenWhileAShorterOneIsRecent() {
        var floor = PulsePathFloor()
        let start = 100 * Self.second
        #expect(floor.floor(adding: 300_000, at: start) == 300_000)
        // A timing request answered 30 ms late: transport 15 ms, for a second.
        #expect(floor.floor(adding: 15_300_000, at: start + Self.second) == 300_000)
        #expect(floor.floor(adding: 15_300_000, at: start + 2 * Self.second + 10) == 300_000)
        #expect(floor.floor(adding: 400_000, at: start + 3 * Self.second) == 300_000)
        // Past both parts holding 0.3 ms, the least since then.
        #expect(floor.floor(adding: 500_000, at: start + 4 * Self.second + 10) == 400_000)
        #expect(floor.floor(adding: 500_000, at: start + 6 * Self.second + 20) == 500_000)
    }

    /// A path that grew for good (a source with more latency) is taken within four seconds.
    @Test func aLongerPathForGoodIsTakenWithinFourSeconds() {
        var floor = PulsePathFloor()
        let start = 100 * Self.second
        var now = start
        var taken: UInt64 = 0
        while now < start + 10 * Self.second {
            taken = floor.floor(adding: now < start + 3 * Self.second ? 1_000_000 : 8_000_000, at: now)
            if now >= start + 7 * Self.second { #expect(taken == 8_000_000) }
            now += Self.second / 100
        }
        #expect(taken == 8_000_000)
    }

    /// After a gap longer than a part (no reads: a corked stream), older paths are forgotten.
    @Test func pathsFromBeforeAGapAreForgotten() {
        var floor = PulsePathFloor()
        let start = 100 * Self.second
        #expect(floor.floor(adding: 200_000, at: start) == 200_000)
        #expect(floor.floor(adding: 900_000, at: start + 5 * Self.second) == 900_000)
    }
}
