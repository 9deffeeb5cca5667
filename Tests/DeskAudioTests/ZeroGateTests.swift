import DeskAudio
import Testing

@Suite struct ZeroGateTests {
    static let zero = [Float](repeating: 0, count: AudioFormat.frameFloats)
    static let negativeZero = [Float](repeating: -0.0, count: AudioFormat.frameFloats)
    static let sound: [Float] = {
        var frame = zero
        frame[AudioFormat.frameFloats - 1] = 1e-9  // one tiny sample is enough to be "not zero"
        return frame
    }()

    static func decide(_ gate: inout ZeroGate, _ frame: [Float]) -> ZeroGate.Decision {
        frame.withUnsafeBufferPointer { gate.decide($0) }
    }

    @Test func frames1Through800OfAZeroRunAreSentThe801stIsHeld() {
        var gate = ZeroGate()
        for index in 1...800 {
            #expect(Self.decide(&gate, Self.zero) == .send, "zero frame \(index)")
        }
        #expect(Self.decide(&gate, Self.zero) == .hold)
        #expect(gate.isHolding)
        for _ in 0..<5000 { #expect(Self.decide(&gate, Self.zero) == .hold) }
    }

    @Test func firstNonZeroFrameAfterHoldingIsSentAndMarked() {
        var gate = ZeroGate()
        for _ in 0..<801 { _ = Self.decide(&gate, Self.zero) }
        #expect(Self.decide(&gate, Self.sound) == .sendAfterGap)
        #expect(Self.decide(&gate, Self.sound) == .send)
        #expect(!gate.isHolding)
    }

    @Test func nonZeroFrameBeforeTheLimitRestartsTheCount() {
        var gate = ZeroGate()
        for _ in 0..<800 { #expect(Self.decide(&gate, Self.zero) == .send) }
        #expect(Self.decide(&gate, Self.sound) == .send)  // nothing was held: no gap flag
        for _ in 0..<800 { #expect(Self.decide(&gate, Self.zero) == .send) }
        #expect(Self.decide(&gate, Self.zero) == .hold)
    }

    @Test func negativeZeroIsZeroAndNaNIsNot() {
        var gate = ZeroGate(zeroFramesSent: 0)
        #expect(Self.decide(&gate, Self.negativeZero) == .hold)
        var nan = Self.zero
        nan[3] = .nan
        #expect(Self.decide(&gate, nan) == .sendAfterGap)
    }

    @Test func disabledGateSendsEverythingAndSwitchingOffWhileHoldingFlagsTheGap() {
        var gate = ZeroGate(isEnabled: false)
        for _ in 0..<2000 { #expect(Self.decide(&gate, Self.zero) == .send) }
        gate.isEnabled = true
        #expect(Self.decide(&gate, Self.zero) == .hold)
        gate.isEnabled = false
        #expect(Self.decide(&gate, Self.zero) == .sendAfterGap)
    }
}
