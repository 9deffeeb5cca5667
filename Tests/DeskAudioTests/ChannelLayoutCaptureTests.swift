import Foundation
import Testing

@testable import DeskAudio

/// The capture side of channel layouts: rings and the mixer in whole samples of any channel
/// count, the host's stereo onto the first two channels, the choice of layout for a sink, the
/// pipeline's switch of encoder, the layout's default bitrate, how applications' channels are
/// linked into a surround capture.
@Suite struct ChannelLayoutCaptureTests {
    @Test func aRingOfSixChannelsTakesWholeSamplesOnly() {
        let ring = SampleRing(minimumFloats: 64)
        ring.setChannels(6)
        let samples = [Float](repeating: 1, count: 100)
        // 64 fit; whole samples of 6: 60.
        #expect(samples.withUnsafeBufferPointer { ring.write($0) } == 60)
        #expect(ring.availableFloats == 60 && ring.droppedFloats == 40)
    }

    @Test func aRingHoldsNoMoreThanItsChannelsAsk() {
        let ring = SampleRing(minimumFloats: 4096)
        ring.setChannels(2, minimumFloats: 1000)  // rounded up to 1024
        let samples = [Float](repeating: 1, count: 4096)
        #expect(samples.withUnsafeBufferPointer { ring.write($0) } == 1024)
        ring.setChannels(8)  // the whole capacity again, emptied
        #expect(ring.availableFloats == 0)
        #expect(samples.withUnsafeBufferPointer { ring.write($0) } == 4096)
    }

    @Test func sixChannelSourcesMixInWholeSamples() {
        let mixer = SourceMixer()
        mixer.channels = 6
        let first = SampleRing(minimumFloats: 16384)
        let second = SampleRing(minimumFloats: 16384)
        first.setChannels(6)
        second.setChannels(6)
        let a = (0..<600).map { Float($0 % 6) / 10 }  // each channel its own value
        let b = [Float](repeating: 0.05, count: 300)
        a.withUnsafeBufferPointer { _ = first.write($0) }
        b.withUnsafeBufferPointer { _ = second.write($0) }
        let inputs = MixerInputs()
        inputs.append(first, flags: .app, slot: 0)
        inputs.append(second, flags: .mic, slot: 1)
        var output = [Float](repeating: .nan, count: 1000)  // not a multiple of 6
        let (count, sources) = output.withUnsafeMutableBufferPointer { mixer.pull(inputs, into: $0) }
        #expect(count == 300 && sources == [.app, .mic])
        for index in 0..<count {
            #expect(abs(output[index] - (Float(index % 6) / 10 + 0.05)) < 1e-6, "float \(index)")
        }
    }

    @Test func theHostsStereoGoesOntoTheFirstTwoChannels() {
        let mixer = SourceMixer()
        mixer.channels = 6
        let host = SampleRing(minimumFloats: 16384)
        let stereo = (0..<(2 * SourceMixer.overlayPrimeSamples)).map { $0 % 2 == 0 ? Float(0.25) : Float(-0.25) }
        stereo.withUnsafeBufferPointer { _ = host.write($0) }
        var output = [Float](repeating: 0.1, count: 60)
        #expect(output.withUnsafeMutableBufferPointer { mixer.overlay(host, onto: $0) })
        for sample in 0..<10 {
            #expect(output[6 * sample] == 0.35 && output[6 * sample + 1] == 0.1 - 0.25)
            #expect(output[(6 * sample + 2)..<(6 * sample + 6)].allSatisfy { $0 == 0.1 })
        }
        #expect(host.availableFloats == stereo.count - 20)
        // Alone (nothing captured): spread, the other channels silent.
        var alone = [Float](repeating: .nan, count: 12)
        #expect(alone.withUnsafeMutableBufferPointer { mixer.spread(host, into: $0) } == 12)
        #expect(alone == [0.25, -0.25, 0, 0, 0, 0, 0.25, -0.25, 0, 0, 0, 0])
    }

    @Test func aSinksChannelsPickTheLayoutThatLosesNone() {
        let expected: [(Int, ChannelLayout)] = [
            (0, .stereo), (1, .mono), (2, .stereo), (3, .surround51), (4, .surround51), (6, .surround51),
            (7, .surround71), (8, .surround71), (16, .surround71),
        ]
        for (channels, layout) in expected {
            #expect(ChannelChoice.layout(forSinkChannels: channels) == layout, "\(channels) channels")
        }
    }

    @Test func aNewEncoderRunsOnTheSameSequenceAndClockAfterAGap() throws {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder())
        var frames: [AudioFrameHeader] = []
        let collect = { (bytes: UnsafeRawBufferPointer) in
            if let frame = try? AudioFrameParser.parse(bytes) { frames.append(frame.header) }
        }
        let tone = (0..<1920).map { Float(sin(Double($0 / 2) * 0.1)) * 0.3 }
        tone.withUnsafeBufferPointer { pipeline.process($0, endTimeNs: 0, deliver: collect) }
        pipeline.replaceEncoder(try OpusFrameEncoder(layout: .surround51))
        #expect(pipeline.channels == 6)
        let surround = [Float](repeating: 0.1, count: 480 * 6 * 2)
        surround.withUnsafeBufferPointer { pipeline.process($0, endTimeNs: 0, deliver: collect) }
        #expect(frames.map(\.sequence) == [0, 1, 2, 3])
        #expect(frames.map(\.sampleClock) == [0, 480, 960, 1440])
        #expect(frames.map(\.channels) == [2, 2, 6, 6])
        #expect(frames[2].flags.contains(.afterGap) && !frames[3].flags.contains(.afterGap))
    }

    @Test func eachLayoutStartsAtItsDefaultBitrateUnlessTheHostChoseOne() throws {
        let settings = EncoderSettings()
        #expect(settings.useDefaults(for: .surround51) == 256_000 && settings.requestedBitrate == 256_000)
        #expect(settings.useDefaults(for: .surround71) == 450_000)
        #expect(settings.useDefaults(for: .mono) == 64_000)
        // Loss reports step from the layout's default by the same percentages.
        settings.useDefaults(for: .surround51)
        #expect(try settings.reportLoss(0.06) == 217_600)  // 15 % down
        try settings.setBitrate(96_000)
        #expect(settings.useDefaults(for: .surround71) == 96_000, "the host's choice stays")
    }

    @Test func applicationChannelsGoToTheirOwnPlaceInASurroundCapture() {
        let surround: Set = ["FL", "FR", "FC", "LFE", "RL", "RR"]
        let stereo: Set = ["FL", "FR"]
        func targets(_ output: String, _ inputs: Set<String>) -> [String] {
            inputs.sorted().filter { PipeWireAppRouter.feeds(output, into: $0, of: inputs) }
        }
        #expect(targets("RL", surround) == ["RL"])
        #expect(targets("LFE", surround) == ["LFE"])
        #expect(targets("FC", surround) == ["FC"])
        #expect(targets("SL", surround) == ["FL"])
        #expect(targets("MONO", surround) == ["FL", "FR"])
        #expect(targets("RL", stereo) == ["FL"])
        #expect(targets("FC", stereo) == ["FL", "FR"])
        #expect(targets("LFE", stereo) == [])
        #expect(targets("FR", ["MONO"]) == ["MONO"])
        #expect(targets("LFE", ["MONO"]) == [])
    }
}
