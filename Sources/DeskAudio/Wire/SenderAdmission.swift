/// Which of several network senders' frames one receiver (a remote microphone) plays: one
/// voice at a time, never faster than real time. The first sender whose frame comes while
/// nobody holds the receiver holds it until it leaves (`leave`) or sends nothing accepted for
/// `Policy.idleReleaseNs`; frames from the others are refused. The holder's audio may run
/// ahead of the wall clock by `Policy.burstNs` at most; beyond it frames are refused as too
/// fast (not charged). Pure: time is passed in.
public struct SenderAdmission: Sendable {
    /// The thresholds, each with its reason.
    public struct Policy: Sendable {
        /// Audio a sender may deliver ahead of real time: a network's backlog after a stall
        /// comes at once, and the jitter buffer keeps at most 640 ms of it anyway.
        public var burstNs: UInt64 = 1_000_000_000
        /// Quiet from the holder after which another may take over: longer than a network
        /// stall the holder's stream survives, short enough for a second viewer to speak.
        public var idleReleaseNs: UInt64 = 2_000_000_000

        /// The default policy.
        public init() {}
    }

    /// What became of one frame.
    public enum Verdict: Equatable, Sendable {
        /// Play it.
        case accepted
        /// Play it: this sender has just taken the receiver over, and its stream starts here.
        case acceptedNewSender
        /// Refused: past the burst the sender may run ahead of real time.
        case tooFast
        /// Refused: another sender holds the receiver.
        case anotherSender
    }

    /// The thresholds.
    public let policy: Policy
    /// The sender holding the receiver, if any.
    public private(set) var holder: Int?
    private var lastAcceptedNs: UInt64 = 0
    private var creditNs: UInt64 = 0
    private var creditAtNs: UInt64 = 0

    /// Nobody holds the receiver yet.
    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// The verdict on a frame of `audioNs` of audio from `sender`, arriving at `nowNs`.
    public mutating func admit(from sender: Int, audioNs: UInt64, nowNs: UInt64) -> Verdict {
        var verdict = Verdict.accepted
        if holder != sender {
            if holder != nil && nowNs &- lastAcceptedNs < policy.idleReleaseNs { return .anotherSender }
            holder = sender
            creditNs = policy.burstNs
            verdict = .acceptedNewSender
        } else if nowNs > creditAtNs {
            creditNs = min(policy.burstNs, creditNs + (nowNs - creditAtNs))
        }
        creditAtNs = max(creditAtNs, nowNs)
        guard creditNs >= audioNs else { return .tooFast }
        creditNs -= audioNs
        lastAcceptedNs = nowNs
        return verdict
    }

    /// `sender` is gone: if it held the receiver, nobody does now.
    public mutating func leave(_ sender: Int) {
        if holder == sender { holder = nil }
    }
}
