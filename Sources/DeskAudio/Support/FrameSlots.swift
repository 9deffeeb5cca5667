/// A fixed number of slots allocated once, each holding up to one whole AudioFrame's bytes
/// (`AudioFrameWriter.maxFrameBytes`) and a stamp (an arrival time): the one store under the
/// frame queue, the player's inbox and the jitter buffer, which each keep their own order
/// over it. Storing and reading allocate nothing. Not synchronized: its owner orders every
/// access.
struct FrameSlots: ~Copyable {
    /// Slots in the store.
    let count: Int
    private let storage: UnsafeMutableRawBufferPointer
    private let lengths: UnsafeMutableBufferPointer<Int>  // 0: empty
    private let stamps: UnsafeMutableBufferPointer<UInt64>

    /// `count` empty slots. (Their pages are taken as frames are first written there.)
    init(count: Int) {
        self.count = count
        storage = .allocate(byteCount: count * AudioFrameWriter.maxFrameBytes, alignment: 8)
        lengths = .zeroed(count)
        stamps = .zeroed(count)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
        stamps.deallocate()
    }

    /// Copies `bytes` (1 to `AudioFrameWriter.maxFrameBytes`) into `slot`, with `stamp`.
    func store(_ bytes: UnsafeRawBufferPointer, in slot: Int, stamp: UInt64 = 0) {
        precondition(
            bytes.count > 0 && bytes.count <= AudioFrameWriter.maxFrameBytes,
            "a slot holds 1 to \(AudioFrameWriter.maxFrameBytes) bytes")
        UnsafeMutableRawBufferPointer(rebasing: space(slot)[0..<bytes.count]).copyMemory(from: bytes)
        lengths[slot] = bytes.count
        stamps[slot] = stamp
    }

    /// The bytes `slot` holds (empty when it holds none), valid until it is stored again.
    func bytes(in slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: space(slot)[0..<lengths[slot]])
    }

    /// The stamp stored with the bytes of `slot`.
    func stamp(in slot: Int) -> UInt64 { stamps[slot] }

    /// True while `slot` holds bytes.
    func isFilled(_ slot: Int) -> Bool { lengths[slot] > 0 }

    /// Empties `slot`.
    func empty(_ slot: Int) { lengths[slot] = 0 }

    /// Empties every slot.
    func emptyAll() { lengths.update(repeating: 0) }

    private func space(_ slot: Int) -> UnsafeMutableRawBufferPointer {
        let size = AudioFrameWriter.maxFrameBytes
        return UnsafeMutableRawBufferPointer(rebasing: storage[(slot * size)..<((slot + 1) * size)])
    }
}
