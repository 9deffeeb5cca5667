import Glibc
import Testing

@testable import DeskAudio

/// pipewire-pulse's transport latency without the stalls in it (`PulseTransportFloor`).
@Suite struct PulseTransportFloorTests {
    /// The update of second `second`, reporting `usec` of transport.
    static func update(_ floor: inout PulseTransportFloor, second: Int, usec: UInt64) -> UInt64 {
        floor.transportUsec(stamp: timeval(tv_sec: second, tv_usec: 500), reportedUsec: usec)
    }

    /// A reply the client took 55 ms late (the ten-minute run's) does not become the
    /// transport: the least of the updates before it stays, and the reads after it keep it.
    @Test func aStalledReplyIsNotTakenForTheTransport() {
        var floor = PulseTransportFloor()
        #expect(Self.update(&floor, second: 1, usec: 30) == 30)
        #expect(Self.update(&floor, second: 2, usec: 45) == 30)
        #expect(Self.update(&floor, second: 3, usec: 55_000) == 30)
        // Reads until the next update see the same timing info again.
        #expect(Self.update(&floor, second: 3, usec: 55_000) == 30)
        #expect(Self.update(&floor, second: 4, usec: 25) == 25)
    }

    /// Before any smaller one, a first update is what there is; an update seen again counts
    /// once, and a transport that grows for good is followed once the smaller ones are
    /// `updateCount` updates old.
    @Test func theLeastOfTheLastUpdatesIsTaken() {
        var floor = PulseTransportFloor()
        #expect(Self.update(&floor, second: 1, usec: 2_000) == 2_000)
        #expect(Self.update(&floor, second: 2, usec: 20) == 20)
        for second in 3..<(2 + PulseTransportFloor.updateCount) {
            #expect(Self.update(&floor, second: second, usec: 900) == 20)
            #expect(Self.update(&floor, second: second, usec: 900) == 20)
        }
        #expect(Self.update(&floor, second: 2 + PulseTransportFloor.updateCount, usec: 900) == 900)
    }
}
