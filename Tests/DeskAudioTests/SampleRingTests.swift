import DeskAudio
import TestSupport
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

    @Test func silenceGoesInAcrossTheWrapAndWhatDoesNotFitIsCounted() {
        let ring = SampleRing(minimumFloats: 64)
        let ones = [Float](repeating: 1, count: 50)
        var scratch = [Float](repeating: -1, count: 64)
        #expect(ones.withUnsafeBufferPointer { ring.write($0) } == 50)
        #expect(scratch.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 50)
        // The next 40 floats wrap: 14 at the end of the storage, 26 at its start.
        #expect(ring.writeSilence(floats: 40) == 40)
        #expect(ones.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[0..<10])) } == 10)
        #expect(scratch.withUnsafeMutableBufferPointer { ring.read(into: $0) } == 50)
        #expect(scratch[0..<40].allSatisfy { $0 == 0 } && scratch[40..<50].allSatisfy { $0 == 1 })
        #expect(ring.writeSilence(floats: 63) == 62, "whole pairs only")
        #expect(ring.writeSilence(floats: 10) == 2)
        #expect(ring.droppedFloats == 1 + 8)
    }

    @Test func aRingLimitedBySetChannelsWrapsWithinItsSpan() {
        // 128 MB of storage of which 1024 floats are in use: 64 MB pushed through must wrap
        // in the first 4 KB, leaving the rest of the storage's pages untouched (a capture
        // ring sized for 7.1 but carrying stereo once touched all of its 1 MB: 0.75 MB of the
        // C example's resident memory).
        let ring = SampleRing(minimumFloats: 32 << 20)
        ring.setChannels(2, minimumFloats: 1000)
        let chunk = [Float](repeating: 0.5, count: 960)
        var scratch = [Float](repeating: 0, count: 960)
        let before = residentKilobytes()
        var readBack = 0
        for _ in 0..<((16 << 20) / chunk.count) {
            #expect(chunk.withUnsafeBufferPointer { ring.write($0) } == chunk.count)
            readBack += scratch.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        }
        let grewKB = residentKilobytes() - before
        #expect(readBack == (16 << 20) / chunk.count * chunk.count && ring.droppedFloats == 0)
        #expect(scratch.allSatisfy { $0 == 0.5 })
        // (Other tests run beside this one and allocate too: the bound is far from both the
        // 4 KB in use and the 64 MB a full-span wrap would touch.)
        #expect(grewKB < 16 * 1024, "resident memory grew \(grewKB) kB")
    }
}
