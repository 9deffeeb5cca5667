import Foundation
import Testing

@testable import DeskAudio

@Suite struct AudioChunkRingTests {
    /// Drains `ring` through a scratch of `room` floats: each piece's samples and end time.
    static func drained(_ ring: AudioChunkRing, room: Int = 4096) -> [(samples: [Float], endNs: UInt64)] {
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: room)
        defer { scratch.deallocate() }
        var pieces: [(samples: [Float], endNs: UInt64)] = []
        ring.drain(through: scratch) { chunk, endNs in pieces.append((Array(chunk), endNs)) }
        return pieces
    }

    static func chunk(_ samples: Int, from first: Int) -> [Float] {
        (0..<(samples * 2)).map { Float(first * 2 + $0) }
    }

    @Test func chunksComeOutInOrderWithTheirEndTimes() {
        let ring = AudioChunkRing()
        for (index, samples) in [480, 256, 1024].enumerated() {
            #expect(Self.chunk(samples, from: index).withUnsafeBufferPointer { ring.put($0, endTimeNs: UInt64(index + 1) * 1000) })
        }
        let pieces = Self.drained(ring)
        #expect(pieces.map(\.samples) == [Self.chunk(480, from: 0), Self.chunk(256, from: 1), Self.chunk(1024, from: 2)])
        #expect(pieces.map(\.endNs) == [1000, 2000, 3000])
        #expect(Self.drained(ring).isEmpty, "each chunk once")
    }

    @Test func aChunkLongerThanTheScratchComesInPiecesEachWithItsOwnEndTime() {
        let ring = AudioChunkRing()
        let end: UInt64 = 1_000_000_000
        _ = Self.chunk(1000, from: 0).withUnsafeBufferPointer { ring.put($0, endTimeNs: end) }
        let pieces = Self.drained(ring, room: 801)  // 400 samples a piece (whole samples)
        #expect(pieces.map { $0.samples.count } == [800, 800, 400])
        #expect(pieces.flatMap(\.samples) == Self.chunk(1000, from: 0))
        // The first piece ends 600 samples before the chunk's last sample; the second 200.
        #expect(pieces.map(\.endNs) == [end - 12_500_000, end - 4_166_666, end])
    }

    @Test func aChunkThatDoesNotFitWholeIsDroppedAndCountedAndTheRestGoOn() {
        let ring = AudioChunkRing(seconds: 0.02)  // 960 samples, rounded up to 1024 stereo samples' floats
        #expect(Self.chunk(600, from: 0).withUnsafeBufferPointer { ring.put($0, endTimeNs: 1) })
        #expect(!Self.chunk(600, from: 1).withUnsafeBufferPointer { ring.put($0, endTimeNs: 2) })
        #expect(ring.droppedChunks == 1)
        #expect(Self.drained(ring).map(\.endNs) == [1])
        #expect(Self.chunk(600, from: 2).withUnsafeBufferPointer { ring.put($0, endTimeNs: 3) }, "room again once read")
        #expect(Self.drained(ring).map(\.endNs) == [3])
    }

    @Test func moreChunksThanItsSlotsAreDroppedNotMixedUp() {
        let ring = AudioChunkRing()
        for index in 0..<(AudioChunkRing.chunkCapacity + 3) {
            _ = [Float(index), Float(index)].withUnsafeBufferPointer { ring.put($0, endTimeNs: UInt64(index)) }
        }
        #expect(ring.droppedChunks == 3)
        let pieces = Self.drained(ring)
        #expect(pieces.map(\.endNs) == (0..<AudioChunkRing.chunkCapacity).map(UInt64.init))
        #expect(pieces.allSatisfy { $0.samples == [Float($0.endNs), Float($0.endNs)] })
    }

    /// A producer thread and a consumer at once (the sanitized lanes check the ordering):
    /// every chunk comes out whole and in order, or is counted as dropped.
    @Test func aProducerAndAConsumerAtOnceLoseNothingUncounted() {
        let ring = AudioChunkRing(seconds: 0.05)
        let total = 20_000
        let producer = Thread {
            var chunk = [Float](repeating: 0, count: 96)
            for index in 0..<total {
                for sample in chunk.indices { chunk[sample] = Float(index % 4096) }
                _ = chunk.withUnsafeBufferPointer { ring.put($0, endTimeNs: UInt64(index)) }
            }
        }
        producer.start()
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096)
        defer { scratch.deallocate() }
        var received: [UInt64] = []
        var whole = true
        while received.last != UInt64(total - 1) && received.count + Int(ring.droppedChunks) < total {
            ring.drain(through: scratch) { chunk, endNs in
                received.append(endNs)
                whole = whole && chunk.count == 96 && chunk.allSatisfy { $0 == Float(Int(endNs) % 4096) }
            }
        }
        while producer.isExecuting { usleep(1_000) }
        ring.drain(through: scratch) { _, endNs in received.append(endNs) }
        #expect(whole, "every chunk whole, its samples its own")
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 }, "in order")
        #expect(received.count + Int(ring.droppedChunks) == total, "\(received.count) + \(ring.droppedChunks) dropped")
    }
}
