import DeskAudio
import TestSupport
import Testing

@Suite struct FramerTests {
    /// A reference signal where every float is distinct, so any loss, duplicate or swap shows.
    static func reference(_ count: Int) -> [Float] { (0..<count).map { Float($0) } }

    @Test(arguments: [1, 7, 42, 2024])
    func randomChunksComeOutAsExactFramesInOrder(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let input = Self.reference(AudioFormat.frameFloats * 37 + 123)
        var framer = Framer()
        var output: [Float] = []
        var frameSizes: Set<Int> = []
        var offset = 0
        while offset < input.count {
            let size = min(Int.random(in: 0...3000, using: &random), input.count - offset)
            input[offset..<offset + size].withUnsafeBufferPointer { chunk in
                framer.append(chunk) { frame in
                    frameSizes.insert(frame.count)
                    output.append(contentsOf: frame)
                }
            }
            offset += size
        }
        #expect(frameSizes == [AudioFormat.frameFloats])
        #expect(output == Array(input[0..<37 * AudioFormat.frameFloats]))
        #expect(framer.pendingFloats == 123)
    }

    @Test func remainderIsCarriedIntoTheNextFrame() {
        var framer = Framer()
        var frames: [[Float]] = []
        let input = Self.reference(AudioFormat.frameFloats + 10)
        input[0..<(AudioFormat.frameFloats - 1)].withUnsafeBufferPointer { chunk in
            framer.append(chunk) { frames.append(Array($0)) }
        }
        #expect(frames.isEmpty)
        input[(AudioFormat.frameFloats - 1)...].withUnsafeBufferPointer { chunk in
            framer.append(chunk) { frames.append(Array($0)) }
        }
        #expect(frames == [Array(input[0..<AudioFormat.frameFloats])])
        #expect(framer.pendingFloats == 10)
    }

    @Test func emptyChunkEmitsNothing() {
        var framer = Framer()
        var calls = 0
        [Float]().withUnsafeBufferPointer { framer.append($0) { _ in calls += 1 } }
        #expect(calls == 0)
        #expect(framer.pendingFloats == 0)
    }

    @Test func resetDropsThePartialFrame() {
        var framer = Framer()
        var frames: [[Float]] = []
        Self.reference(100).withUnsafeBufferPointer { framer.append($0) { frames.append(Array($0)) } }
        framer.reset()
        let second = Self.reference(AudioFormat.frameFloats).map { $0 + 5000 }
        second.withUnsafeBufferPointer { framer.append($0) { frames.append(Array($0)) } }
        #expect(frames == [second])
    }
}
