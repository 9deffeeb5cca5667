import DeskAudio
import Testing

@Suite struct SampleRingTests {
    @Test func readsBackInOrderAcrossTheWrap() {
        let ring = SampleRing(minimumFloats: 64)
        var next: Float = 0
        var expected: Float = 0
        var scratch = [Float](repeating: -1, count: 50)
        for round in 0..<40 {
            let chunk = (0..<(round % 2 == 0 ? 40 : 22)).map { _ in
                next += 1
                return next
            }
            #expect(chunk.withUnsafeBufferPointer { ring.write($0) } == chunk.count)
            let read = scratch.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            #expect(read == chunk.count)
            for value in scratch[0..<read] {
                expected += 1
                #expect(value == expected)
            }
        }
        #expect(ring.droppedFloats == 0)
    }

    @Test func addsOntoTheDestinationInOrderAcrossTheWrap() {
        let ring = SampleRing(minimumFloats: 64)
        var next: Float = 0
        var expected: Float = 0
        for round in 0..<40 {
            let chunk = (0..<(round % 2 == 0 ? 40 : 22)).map { _ in
                next += 1
                return next
            }
            #expect(chunk.withUnsafeBufferPointer { ring.write($0) } == chunk.count)
            var sums = [Float](repeating: 1000, count: 50)
            let added = sums.withUnsafeMutableBufferPointer { ring.add(into: $0) }
            #expect(added == chunk.count)
            for value in sums[0..<added] {
                expected += 1
                #expect(value == 1000 + expected)
            }
            #expect(sums[added...].allSatisfy { $0 == 1000 }, "nothing beyond what was read")
        }
        #expect(ring.availableFloats == 0)
    }

    @Test func fullRingDropsTheExcessInWholePairsAndCountsIt() {
        let ring = SampleRing(minimumFloats: 64)
        let samples = [Float](repeating: 1, count: 61)
        #expect(samples.withUnsafeBufferPointer { ring.write($0) } == 60)
        #expect(samples.withUnsafeBufferPointer { ring.write($0) } == 4)
        #expect(ring.availableFloats == 64)
        #expect(ring.droppedFloats == 1 + 57)
        ring.discardAll()
        #expect(ring.availableFloats == 0)
    }
}
