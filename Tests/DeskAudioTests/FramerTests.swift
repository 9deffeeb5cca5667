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

    /// A new length asked for mid-frame takes effect once that frame is complete; asked for
    /// between frames, at once. No float is lost or repeated across the changes.
    @Test func aNewLengthTakesEffectAtTheNextFrameBoundary() {
        var framer = Framer()
        var sizes: [Int] = []
        var output: [Float] = []
        func feed(_ input: ArraySlice<Float>) {
            input.withUnsafeBufferPointer { chunk in
                framer.append(chunk) { frame in
                    sizes.append(frame.count)
                    output.append(contentsOf: frame)
                }
            }
        }
        let input = Self.reference(960 + 960 + 480 + 1920 + 240 + 100)
        feed(input[0..<1300])  // one 10 ms frame and 340 floats of the next
        framer.setDuration(.ms5)
        #expect(framer.currentFrameFloats == 960, "the partial frame keeps its length")
        feed(input[1300..<2400])  // completes the 10 ms frame, then one 5 ms frame
        #expect(framer.currentFrameFloats == 480)
        #expect(framer.pendingFloats == 0)
        framer.setDuration(.ms20)
        #expect(framer.currentFrameFloats == 1920, "between frames the change is immediate")
        feed(input[2400..<4320])
        framer.setDuration(.ms2_5)
        feed(input[4320...])
        #expect(sizes == [960, 960, 480, 1920, 240])
        #expect(output == Array(input[0..<4560]))
        #expect(framer.pendingFloats == 100)
    }
}
