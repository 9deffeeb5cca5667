/// Stops sending during digital silence. A frame is zero when every sample is 0
/// (+0.0 or −0.0). Frames 1…800 of a run of zero frames pass; from the 801st on,
/// frames are held back; the first frame with any non-zero sample passes at once and
/// is marked as the first frame after a gap.
public struct ZeroGate {
    /// What the gate decided for one frame.
    public enum Decision: Equatable, Sendable {
        /// Encode and send the frame.
        case send
        /// Encode and send the frame; it is the first one after frames were held back.
        case sendAfterGap
        /// Hold the frame back: it is part of a long digital silence.
        case hold
    }

    /// Zero frames in a row that are still sent before the gate closes.
    public static let defaultZeroFramesSent = 800

    /// How many zero frames in a row pass before the gate closes.
    public let zeroFramesSent: Int
    /// When false, every frame passes.
    public var isEnabled: Bool
    private var zeroRun = 0
    private var holding = false

    /// A gate that closes after `zeroFramesSent` consecutive zero frames.
    public init(zeroFramesSent: Int = ZeroGate.defaultZeroFramesSent, isEnabled: Bool = true) {
        precondition(zeroFramesSent >= 0)
        self.zeroFramesSent = zeroFramesSent
        self.isEnabled = isEnabled
    }

    /// True while frames are being held back.
    public var isHolding: Bool { holding }

    /// Decides for one frame of interleaved samples.
    public mutating func decide(_ frame: UnsafeBufferPointer<Float>) -> Decision {
        let zero = ZeroGate.isZero(frame)
        zeroRun = zero ? zeroRun + 1 : 0
        if zero && isEnabled && zeroRun > zeroFramesSent {
            holding = true
            return .hold
        }
        if holding {
            holding = false
            return .sendAfterGap
        }
        return .send
    }

    /// Forgets the current zero run (a new capture session starts fresh).
    public mutating func reset() {
        zeroRun = 0
        holding = false
    }

    /// True when every sample is +0.0 or −0.0 (NaN is not zero).
    @inline(__always)
    public static func isZero(_ frame: UnsafeBufferPointer<Float>) -> Bool {
        for sample in frame where sample != 0 { return false }
        return true
    }
}
