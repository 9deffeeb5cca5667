import DeskAudio
import Testing

@Suite struct BitrateAdapterTests {
    typealias Decision = BitrateAdapter.Decision

    /// A scripted loss trace with the defaults (start 128 kbit/s; thresholds 10/5/1 %; steps
    /// 50 % critical, 15 % down, 15 % up): every step checked.
    @Test func aScriptedLossTraceStepsExactlyAsSpecified() throws {
        var adapter = BitrateAdapter()
        let trace: [(Float, Decision)] = [
            (0.000, Decision(bitrate: 147_200, expectedLossPercent: 0, fec: false)),  // < 1 %: up 15 %
            (0.009, Decision(bitrate: 169_280, expectedLossPercent: 1, fec: false)),  // still < 1 %
            (0.010, Decision(bitrate: 169_280, expectedLossPercent: 1, fec: false)),  // = low: hold, FEC still off
            (0.020, Decision(bitrate: 169_280, expectedLossPercent: 2, fec: true)),  // between: hold, FEC on
            (0.050, Decision(bitrate: 143_888, expectedLossPercent: 5, fec: true)),  // = high: down 15 %
            (0.099, Decision(bitrate: 122_305, expectedLossPercent: 10, fec: true)),  // below critical: down 15 %
            (0.100, Decision(bitrate: 61_153, expectedLossPercent: 10, fec: true)),  // = critical: down 50 % (61152.5 rounds up)
            (0.300, Decision(bitrate: 30_577, expectedLossPercent: 30, fec: true)),
            (0.000, Decision(bitrate: 35_164, expectedLossPercent: 0, fec: false)),  // recovering: up, FEC off
        ]
        for (step, (loss, expected)) in trace.enumerated() {
            #expect(try adapter.report(loss: loss) == expected, "step \(step), loss \(loss)")
        }
    }

    @Test func theBitrateStaysWithinTheRange() throws {
        var high = BitrateAdapter(start: 500_000)
        #expect(try high.report(loss: 0).bitrate == 510_000, "capped at the maximum")
        #expect(try high.report(loss: 0).bitrate == 510_000)
        var low = BitrateAdapter(start: 7_000)
        #expect(try low.report(loss: 0.5).bitrate == 6_000, "floored at the minimum")
        var ranged = BitrateAdapter()
        try ranged.setRange(minimum: 32_000, maximum: 64_000)
        #expect(ranged.bitrate == 64_000, "pulled into a new range")
        for _ in 0..<5 { _ = try ranged.report(loss: 0.2) }
        #expect(ranged.bitrate == 32_000)
        ranged.reset(to: 200_000)
        #expect(ranged.bitrate == 64_000)
    }

    @Test func badLossesAndRangesAreRefusedAndChangeNothing() throws {
        var adapter = BitrateAdapter()
        for loss: Float in [-0.1, 1.5, .nan, .infinity] {
            #expect(throws: DeskAudioError.self) { _ = try adapter.report(loss: loss) }
        }
        #expect(throws: DeskAudioError.self) { try adapter.setRange(minimum: 64_000, maximum: 32_000) }
        #expect(throws: DeskAudioError.self) { try adapter.setRange(minimum: 1_000, maximum: 32_000) }
        #expect(adapter == BitrateAdapter())
    }
}
