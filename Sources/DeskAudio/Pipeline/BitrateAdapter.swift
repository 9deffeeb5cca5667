/// Steps the Opus bitrate with the packet loss the host reports, within [minimum, maximum]:
/// loss ≥ the critical threshold → down by the critical step; loss ≥ the high threshold →
/// down by the normal step; loss < the low threshold → up by the up step; in between, no
/// change. It also sets the expected packet loss Opus plans for, and turns in-band FEC on
/// while loss is above the low threshold. A value type: the caller keeps it and applies
/// its decisions.
public struct BitrateAdapter: Equatable, Sendable {
    /// Thresholds (fractions of packets lost) and steps (fractions of the bitrate).
    public struct Policy: Equatable, Sendable {
        /// Loss at or above which the bitrate drops by `criticalStepDown` (10 %).
        public var criticalLoss: Float = 0.10
        /// Loss at or above which the bitrate drops by `stepDown` (5 %).
        public var highLoss: Float = 0.05
        /// Loss below which the bitrate rises by `stepUp` (1 %).
        public var lowLoss: Float = 0.01
        /// Fraction added per report below `lowLoss` (15 %).
        public var stepUp: Float = 0.15
        /// Fraction removed per report at or above `highLoss` (15 %).
        public var stepDown: Float = 0.15
        /// Fraction removed per report at or above `criticalLoss` (50 %).
        public var criticalStepDown: Float = 0.50

        /// The defaults above.
        public init() {}
    }

    /// What to set on the encoder after a report.
    public struct Decision: Equatable, Sendable {
        /// Target bitrate, bits per second.
        public var bitrate: Int32
        /// Expected packet loss for Opus, percent (0–100).
        public var expectedLossPercent: Int32
        /// In-band FEC on or off.
        public var fec: Bool

        /// A decision with every field given.
        public init(bitrate: Int32, expectedLossPercent: Int32, fec: Bool) {
            self.bitrate = bitrate
            self.expectedLossPercent = expectedLossPercent
            self.fec = fec
        }
    }

    /// The policy in force.
    public var policy: Policy
    /// Lowest bitrate it steps down to (default 6 kbit/s).
    public private(set) var minimum: Int32
    /// Highest bitrate it steps up to (default 510 kbit/s).
    public private(set) var maximum: Int32
    /// The bitrate now.
    public private(set) var bitrate: Int32

    /// An adapter starting at `start`, within [minimum, maximum].
    public init(
        start: Int32 = OpusFrameEncoder.defaultBitrate, minimum: Int32 = OpusFrameEncoder.bitrateRange.lowerBound,
        maximum: Int32 = OpusFrameEncoder.bitrateRange.upperBound, policy: Policy = Policy()
    ) {
        self.policy = policy
        self.minimum = minimum
        self.maximum = maximum
        bitrate = min(max(start, minimum), maximum)
    }

    /// Sets the range (within 6 000–510 000, minimum ≤ maximum); the bitrate is pulled into it.
    public mutating func setRange(minimum: Int32, maximum: Int32) throws(DeskAudioError) {
        let allowed = OpusFrameEncoder.bitrateRange
        guard allowed.contains(minimum), allowed.contains(maximum), minimum <= maximum else {
            throw .invalidArgument(
                "bitrate range \(minimum)...\(maximum) is not within 6000...510000 with minimum ≤ maximum")
        }
        self.minimum = minimum
        self.maximum = maximum
        bitrate = min(max(bitrate, minimum), maximum)
    }

    /// Starts again from `value` (a bitrate the host set), pulled into the range.
    public mutating func reset(to value: Int32) {
        bitrate = min(max(value, minimum), maximum)
    }

    /// Takes the loss the host observed over one reporting interval (0–1) and returns the
    /// settings for the encoder.
    public mutating func report(loss: Float) throws(DeskAudioError) -> Decision {
        guard loss.isFinite, (0...1).contains(loss) else {
            throw .invalidArgument("packet loss \(loss) is not a fraction from 0 to 1")
        }
        let factor: Float
        if loss >= policy.criticalLoss {
            factor = 1 - policy.criticalStepDown
        } else if loss >= policy.highLoss {
            factor = 1 - policy.stepDown
        } else if loss < policy.lowLoss {
            factor = 1 + policy.stepUp
        } else {
            factor = 1
        }
        let stepped = (Float(bitrate) * factor).rounded()
        bitrate = Int32(min(max(stepped, Float(minimum)), Float(maximum)))
        return Decision(
            bitrate: bitrate, expectedLossPercent: Int32((loss * 100).rounded()), fec: loss > policy.lowLoss)
    }
}
