import DeskAudio
import Testing

@Suite struct EncoderSettingsTests {
    @Test func lossProtectionReachesLibopus() throws {
        let settings = EncoderSettings()
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        try settings.setLossProtection(fec: true, expectedLossPercent: 12)
        settings.apply(to: pipeline)
        #expect(pipeline.encoder.lossProtectionInEncoder == (true, 12))
        #expect(throws: DeskAudioError.self) { try settings.setLossProtection(fec: true, expectedLossPercent: 101) }
    }

    @Test func lossReportsStepTheBitrateAndSetFECInTheEncoder() throws {
        let settings = EncoderSettings()
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        #expect(try settings.reportLoss(0.12) == 64_000)
        settings.apply(to: pipeline)
        #expect(pipeline.encoder.bitrate == 64_000)
        #expect(pipeline.encoder.lossProtectionInEncoder == (true, 12))
        try settings.setBitrate(100_000)
        #expect(try settings.reportLoss(0) == 115_000, "a bitrate the host sets is where steps go on from")
        settings.apply(to: pipeline)
        #expect(pipeline.encoder.lossProtectionInEncoder == (false, 0))
        try settings.setBitrateRange(minimum: 20_000, maximum: 40_000)
        #expect(settings.requestedBitrate == 40_000)
        #expect(throws: DeskAudioError.self) { _ = try settings.reportLoss(.nan) }
    }

    @Test func withTheGateOffEveryZeroFrameIsSent() throws {
        let settings = EncoderSettings()
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        settings.setGate(enabled: false)
        settings.apply(to: pipeline)
        var sent = 0
        [Float](repeating: 0, count: 1000 * AudioFormat.frameFloats).withUnsafeBufferPointer { chunk in
            pipeline.process(chunk, endTimeNs: 0) { _ in sent += 1 }
        }
        #expect(sent == 1000)
        settings.setGate(enabled: true)
        settings.apply(to: pipeline)
        [Float](repeating: 0, count: 1000 * AudioFormat.frameFloats).withUnsafeBufferPointer { chunk in
            pipeline.process(chunk, endTimeNs: 0) { _ in sent += 1 }
        }
        #expect(sent == 1000, "switched on 1000 zero frames into a silence, the gate holds at once")
    }
}
