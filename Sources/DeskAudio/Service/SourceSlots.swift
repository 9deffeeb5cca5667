import Synchronization

/// The feeds a capture's sources write into, one per slot, made once (a ring's memory is
/// untouched, so costs nothing resident, until a stream writes). The worker reads the rings
/// of the slots whose bit is set in `active`, without a lock and without touching reference
/// counts; the service sets a slot's bit once its stream runs and clears it before the
/// stream stops.
final class SourceSlots: @unchecked Sendable {
    /// One feed per slot.
    let feeds: [SourceFeed]
    // The feeds' rings and clocks, unretained (the feeds keep them), for the worker.
    private let rings: UnsafeMutablePointer<Unmanaged<SampleRing>>
    private let clocks: UnsafeMutablePointer<Unmanaged<PublishedClockLine>>
    private let active = Atomic<UInt32>(0)

    /// `MixerInputs.capacity` idle slots whose feeds post to `notices`.
    init(notices: NoticeBoard) {
        feeds = (0..<MixerInputs.capacity).map { _ in SourceFeed(notices: notices) }
        rings = .allocate(capacity: feeds.count)
        clocks = .allocate(capacity: feeds.count)
        for (slot, feed) in feeds.enumerated() {
            rings[slot] = Unmanaged.passUnretained(feed.ring)
            clocks[slot] = Unmanaged.passUnretained(feed.clockLine)
        }
    }

    deinit {
        rings.deallocate()
        clocks.deallocate()
    }

    /// Worker: the clock of slot `slot`'s stream (no reference count touched).
    func clock(ofSlot slot: Int) -> Unmanaged<PublishedClockLine> { clocks[slot] }

    /// The worker mixes slot `slot` from now on.
    func activate(_ slot: Int) { active.bitwiseOr(1 << UInt32(slot), ordering: .releasing) }

    /// The worker leaves slot `slot` alone from its next read on.
    func deactivate(_ slot: Int) { active.bitwiseAnd(~(1 << UInt32(slot)), ordering: .releasing) }

    /// Worker: lists the active slots' rings in `inputs` (allocates nothing).
    func list(into inputs: MixerInputs) {
        inputs.removeAll()
        var bits = active.load(ordering: .acquiring)
        while bits != 0 {
            let slot = bits.trailingZeroBitCount
            bits &= bits - 1
            inputs.append(rings[slot], flags: feeds[slot].frameFlags, slot: slot)
        }
    }
}
