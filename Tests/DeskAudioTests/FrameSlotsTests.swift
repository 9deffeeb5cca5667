@testable import DeskAudio
import Testing

struct FrameSlotsTests {
    @Test func eachSlotKeepsItsBytesAndStampUntilStoredAgainOrEmptied() {
        let slots = FrameSlots(count: 3)
        let largest = [UInt8](repeating: 0xA5, count: AudioFrameWriter.maxFrameBytes)
        let short: [UInt8] = [1, 2, 3]
        short.withUnsafeBytes { slots.store($0, in: 0, stamp: 7) }
        largest.withUnsafeBytes { slots.store($0, in: 2, stamp: .max) }
        #expect(Array(slots.bytes(in: 0)) == short)
        #expect(slots.stamp(in: 0) == 7)
        #expect(Array(slots.bytes(in: 2)) == largest)
        #expect(slots.stamp(in: 2) == .max)
        #expect(!slots.isFilled(1) && slots.bytes(in: 1).isEmpty)

        [UInt8(9)].withUnsafeBytes { slots.store($0, in: 0) }  // shorter: nothing of the old bytes shows
        #expect(Array(slots.bytes(in: 0)) == [9] && slots.stamp(in: 0) == 0)
        slots.empty(2)
        #expect(!slots.isFilled(2) && slots.isFilled(0))
        slots.emptyAll()
        #expect((0..<3).allSatisfy { !slots.isFilled($0) })
    }
}
