/// Frames lost on the way, counted from the sequence numbers that arrived: those missing
/// between the oldest and the newest. A frame older than the first to arrive (overtaken on
/// the way) moves the oldest back, so it is not counted as lost. A jump of more than
/// 10 000 frames (100 s) either way is a sender that started over: counting goes on from there.
struct SequenceCount {
    private var oldest: UInt32?
    private var newest: UInt32 = 0
    private var arrived: UInt64 = 0
    private var lostBefore: UInt64 = 0

    /// Notes one frame that arrived.
    mutating func note(_ sequence: UInt32) {
        if let oldest, abs(Int(Int32(bitPattern: sequence &- newest))) <= 10_000 {
            if Int32(bitPattern: sequence &- newest) > 0 { newest = sequence }
            if Int32(bitPattern: sequence &- oldest) < 0 { self.oldest = sequence }
            arrived += 1
            return
        }
        lostBefore += lostSinceOldest
        oldest = sequence
        newest = sequence
        arrived = 1
    }

    /// Frames that never arrived (a frame that arrived twice makes up for one).
    var lost: UInt64 { lostBefore + lostSinceOldest }

    private var lostSinceOldest: UInt64 {
        guard let oldest else { return 0 }
        let expected = UInt64(newest &- oldest) + 1
        return expected > arrived ? expected - arrived : 0
    }
}
