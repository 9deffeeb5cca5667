import DeskAudio

/// One 10 ms frame of output, allocated once.
nonisolated(unsafe) private let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 960)

/// libFuzzer entry: the bytes are a sequence of records, each a frame's length (2 bytes,
/// little-endian), how many ms after the previous one it arrives (1 byte), how many 10 ms
/// pulls follow its insertion (low 4 bits) and which of 16 senders sent it (high 4 bits),
/// then the frame, fed as `serve --remote-mic` feeds a browser's: through `SenderAdmission`
/// (a new holder starts a new stream) into one jitter buffer. Bad frames must be refused
/// with an error, frames the admission refuses change nothing, and whatever arrives, in any
/// order, every pull must fill its 10 ms and the counts must add up.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJitterBuffer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, let buffer = try? JitterBuffer() else { return 0 }
    var offset = 0
    var now: UInt64 = 1_000_000_000
    var pulls: UInt64 = 0
    var admission = SenderAdmission()
    while offset + 4 <= size {
        let length = min(Int(data[offset]) | Int(data[offset + 1]) << 8, size - offset - 4)
        now += UInt64(data[offset + 2]) * 1_000_000
        let pullCount = Int(data[offset + 3] & 0x0f)
        let sender = Int(data[offset + 3] >> 4)
        offset += 4
        let before = buffer.counters
        let bytes = UnsafeRawBufferPointer(start: data + offset, count: length)
        if (try? JitterBuffer.playableFrame(bytes)) != nil {
            switch admission.admit(from: sender, audioNs: 10_000_000, nowNs: now) {
            case .accepted: try! buffer.insert(bytes, arrivalNs: now)
            case .acceptedNewSender:
                buffer.reset()
                try! buffer.insert(bytes, arrivalNs: now)
            case .tooFast, .anotherSender: precondition(admission.holder != nil, "refused with nobody holding")
            }
        } else {
            do {
                try buffer.insert(bytes, arrivalNs: now)
                preconditionFailure("a frame playableFrame refused was inserted")
            } catch {
                precondition(buffer.counters == before, "a refused frame changed the counts")
            }
        }
        offset += length
        for _ in 0..<pullCount {
            now += 10_000_000
            output.update(repeating: .nan)
            _ = buffer.pull(into: output, nowNs: now)
            pulls += 1
            precondition(output.allSatisfy { $0.isFinite }, "a pull left samples unwritten")
        }
        precondition(buffer.bufferedFrames <= JitterBuffer.capacity, "\(buffer.bufferedFrames) frames buffered")
        precondition(JitterBuffer.delayFrames.contains(buffer.targetFrames), "target \(buffer.targetFrames)")
    }
    let counts = buffer.counters
    precondition(counts.framesPlayed + counts.framesConcealed + counts.framesInserted <= pulls, "\(counts), \(pulls) pulls")
    return 0
}
