/// Frames lost on the way, counted from the sequence numbers that arrived: those missing
/// between the first and the newest. A jump of more than 10 000 frames (100 s) either way
/// is a sender that started over: counting goes on from there.
struct SequenceCount {
    private var first: UInt32?
    private var newest: UInt32 = 0
    private var arrived: UInt64 = 0
    private var lostBefore: UInt64 = 0

    /// Notes one frame that arrived.
    mutating func note(_ sequence: UInt32) {
        if first != nil, abs(Int(Int32(bitPattern: sequence &- newest))) <= 10_000 {
            if Int32(bitPattern: sequence &- newest) > 0 { newest = sequence }
            arrived += 1
            return
        }
        lostBefore += lostSinceFirst
        first = sequence
        newest = sequence
        arrived = 1
    }

    /// Frames that never arrived (a frame that arrived twice makes up for one).
    var lost: UInt64 { lostBefore + lostSinceFirst }

    private var lostSinceFirst: UInt64 {
        guard let first else { return 0 }
        let expected = UInt64(newest &- first) + 1
        return expected > arrived ? expected - arrived : 0
    }
}
