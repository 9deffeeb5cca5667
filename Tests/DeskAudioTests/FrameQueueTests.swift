@testable import DeskAudio
import Testing

struct FrameQueueTests {
    /// A frame of `length` bytes whose header carries `sequence` (and a capture time from
    /// it) and whose bytes are all distinct per frame.
    private func frame(_ sequence: UInt32, length: Int = 100, frameSamples: UInt16 = 480) -> [UInt8] {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: sequence), count: length)
        bytes.withUnsafeMutableBytes { raw in
            AudioFrameWriter.write(
                AudioFrameHeader(flags: [.app], sequence: sequence, sampleClock: 0, captureTimeNs: UInt64(sequence) * 7,
                    frameSamples: frameSamples, payloadLength: UInt16(length - AudioFrameHeader.byteCount)),
                into: raw)
        }
        return bytes
    }

    private func pop(_ queue: FrameQueue) -> (bytes: [UInt8], captureTimeNs: UInt64)? {
        var buffer = [UInt8](repeating: 0, count: AudioFrameWriter.maxFrameBytes)
        guard let length = buffer.withUnsafeMutableBytes({ queue.pop(into: $0) }) else { return nil }
        let bytes = Array(buffer[0..<length])
        let header = bytes.withUnsafeBytes { try? AudioFrameParser.parse($0).header }
        return (bytes, header?.captureTimeNs ?? .max)
    }

    @Test func framesComeOutInOrderWithTheirTimes() {
        let queue = FrameQueue()
        for sequence in 0..<3 { frame(UInt32(sequence), length: 40 + sequence).withUnsafeBytes { queue.push($0) } }
        for sequence in 0..<3 {
            let popped = pop(queue)
            #expect(popped?.bytes == frame(UInt32(sequence), length: 40 + sequence))
            #expect(popped?.captureTimeNs == UInt64(sequence) * 7)
        }
        #expect(queue.droppedFrames == 0)
    }

    @Test func overflowDropsTheOldestAndFlagsTheNextFrameOnly() throws {
        let queue = FrameQueue()
        let pushed = FrameQueue.capacity + 12
        for sequence in 0..<pushed { frame(UInt32(sequence)).withUnsafeBytes { queue.push($0) } }
        #expect(queue.droppedFrames == 12)
        for sequence in 12..<pushed {
            let bytes = try #require(pop(queue)).bytes
            let header = try bytes.withUnsafeBytes { try AudioFrameParser.parse($0).header }
            #expect(header.sequence == UInt32(sequence))
            #expect(header.flags == (sequence == 12 ? [.app, .afterLoss] : [.app]))
            #expect(bytes[AudioFrameHeader.byteCount...].allSatisfy { $0 == UInt8(sequence) })
        }
        frame(99).withUnsafeBytes { queue.push($0) }
        let header = try pop(queue).map { popped in try popped.bytes.withUnsafeBytes { try AudioFrameParser.parse($0).header } }
        #expect(header?.flags == [.app], "no flag once the loss was reported")
    }

    @Test func closeWakesAWaitingPopAndReopenStartsEmpty() async {
        let queue = FrameQueue()
        frame(1).withUnsafeBytes { queue.push($0) }
        let waiter = Task.detached { [queue] in
            var buffer = [UInt8](repeating: 0, count: AudioFrameWriter.maxFrameBytes)
            var popped = 0
            while buffer.withUnsafeMutableBytes({ queue.pop(into: $0) }) != nil { popped += 1 }
            return popped
        }
        try? await Task.sleep(for: .milliseconds(50))
        queue.close()
        #expect(await waiter.value == 1)
        frame(2).withUnsafeBytes { queue.push($0) }
        queue.reopen()
        frame(3).withUnsafeBytes { queue.push($0) }
        #expect(pop(queue)?.bytes == frame(3))
    }

    /// The queue holds 0.5 s of audio whatever the frame length: 200 frames of 2.5 ms, 25 of 20 ms.
    @Test(arguments: [(UInt16(120), 200), (240, 100), (960, 25)])
    func itHoldsHalfASecondOfFramesOfAnyLength(frameSamples: UInt16, held: Int) throws {
        let queue = FrameQueue()
        for sequence in 0..<(held + 5) {
            frame(UInt32(sequence), frameSamples: frameSamples).withUnsafeBytes { queue.push($0) }
        }
        #expect(queue.droppedFrames == 5)
        let header = try #require(pop(queue)).bytes.withUnsafeBytes { try AudioFrameParser.parse($0).header }
        #expect(header.sequence == 5)
        #expect(header.flags.contains(.afterLoss))
    }
}
