import Synchronization

/// The feeds a capture's sources write into, one per slot, made once (a ring's memory is
/// untouched, so costs nothing resident, until a stream writes). The worker reads the rings
/// of the slots whose bit is set in `active`, without a lock; the service sets a slot's bit
/// once its stream runs and clears it before the stream stops.
final class SourceSlots: Sendable {
    /// One feed per slot.
    let feeds: [SourceFeed]
    private let active = Atomic<UInt32>(0)

    /// `MixerInputs.capacity` idle slots whose feeds post to `notices`.
    init(notices: NoticeBoard) {
        feeds = (0..<MixerInputs.capacity).map { _ in SourceFeed(name: "", notices: notices) }
    }

    /// The worker mixes slot `slot` from now on.
    func activate(_ slot: Int) { active.bitwiseOr(1 << UInt32(slot), ordering: .releasing) }

    /// The worker leaves slot `slot` alone from its next read on.
    func deactivate(_ slot: Int) { active.bitwiseAnd(~(1 << UInt32(slot)), ordering: .releasing) }

    /// True while some slot is active.
    var anyActive: Bool { active.load(ordering: .acquiring) != 0 }

    /// Worker: lists the active slots' rings in `inputs` (allocates nothing).
    func list(into inputs: MixerInputs) {
        inputs.removeAll()
        var bits = active.load(ordering: .acquiring)
        while bits != 0 {
            let slot = bits.trailingZeroBitCount
            bits &= bits - 1
            inputs.append(feeds[slot].ring, flags: feeds[slot].frameFlags, slot: slot)
        }
    }
}
