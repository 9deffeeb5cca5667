import DeskAudio
import Testing

@Suite struct SourceMixerTests {
    static func ring(_ samples: [Float]) -> SampleRing {
        let ring = SampleRing(minimumFloats: 16384)
        samples.withUnsafeBufferPointer { _ = ring.write($0) }
        return ring
    }

    static func pull(_ mixer: SourceMixer, app: SampleRing?, mic: SampleRing?) -> (
        [Float], AudioFrameHeader.Flags
    ) {
        var output = [Float](repeating: .nan, count: 8192)
        let (count, sources) = output.withUnsafeMutableBufferPointer {
            mixer.pull(app: app, mic: mic, into: $0)
        }
        return (Array(output[0..<count]), sources)
    }

    @Test func aSingleSourcePassesBitExact() {
        let samples: [Float] = (0..<960).map { Float($0) / 2000 - 0.2 }
        let (app, appSources) = Self.pull(SourceMixer(), app: Self.ring(samples), mic: nil)
        #expect(app == samples && appSources == [.app])
        let (mic, micSources) = Self.pull(SourceMixer(), app: nil, mic: Self.ring(samples))
        #expect(mic == samples && micSources == [.mic])
        #expect(Self.pull(SourceMixer(), app: nil, mic: nil).0.isEmpty)
    }

    @Test func twoSourcesAreSummedWhereBothHaveAudio() {
        let app = Self.ring([Float](repeating: 0.25, count: 1000))
        let mic = Self.ring([Float](repeating: -0.5, count: 600))
        let (mixed, sources) = Self.pull(SourceMixer(), app: app, mic: mic)
        #expect(mixed == [Float](repeating: -0.25, count: 600))
        #expect(sources == [.app, .mic])
        #expect(app.availableFloats == 400 && mic.availableFloats == 0)
    }

    @Test func sumsBeyondTheKneeBendButNeverReachFullScale() {
        let app = Self.ring([0.5, -0.5, 0.79, 0.9, 1.0, -1.0, 0.4, 0.05])
        let mic = Self.ring([0.5, -0.5, 0.0, 0.9, 1.0, -1.0, 0.4, 0.05])
        let (mixed, _) = Self.pull(SourceMixer(), app: app, mic: mic)
        #expect(mixed[2] == 0.79 && mixed[7] == 0.1)
        #expect(mixed[0] > 0.9 && mixed[0] < 1 && mixed[1] == -mixed[0])
        #expect(mixed.allSatisfy { abs($0) < 1 })
        #expect(mixed[3] < mixed[4])  // still monotonic above the knee
    }

    @Test func aLaggingSourceIsWaitedFor40msAtMostThenCountsAsSilence() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 1900))
        let mic = Self.ring([])
        #expect(Self.pull(mixer, app: app, mic: mic).0.isEmpty, "1900 samples ahead: still waiting")
        _ = [Float](repeating: 0.1, count: 2 * 120).withUnsafeBufferPointer { app.write($0) }
        let (alone, sources) = Self.pull(mixer, app: app, mic: mic)
        #expect(alone.count == 2 * 100 && sources == [.app], "what is beyond 1920 samples goes out alone")
        #expect(mixer.silenceFilledSamples == 100)
        #expect(app.availableFloats == 2 * 1920)
    }

    @Test func lateAudioOfTheLaggingSourceIsDroppedSoBothStayAligned() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 2000))
        let mic = Self.ring([])
        #expect(
            Self.pull(mixer, app: app, mic: mic).0.count == 2 * 80, "80 samples beyond 40 ms go out alone")
        // The mic's late 80 samples arrive, then 100 on time: the late ones are dropped.
        _ = [Float](repeating: 9, count: 2 * 80).withUnsafeBufferPointer { mic.write($0) }
        _ = [Float](repeating: 0.2, count: 2 * 100).withUnsafeBufferPointer { mic.write($0) }
        let (mixed, sources) = Self.pull(mixer, app: app, mic: mic)
        #expect(sources == [.app, .mic])
        #expect(mixed.count == 2 * 100 && mixed.allSatisfy { abs($0 - 0.3) < 1e-6 })
        #expect(mixer.lateDroppedSamples == 80 && mixer.silenceFilledSamples == 80)
    }

    @Test func aSourceBackFromALongStallLosesAtMost40ms() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 6000))
        let mic = Self.ring([])
        while !Self.pull(mixer, app: app, mic: mic).0.isEmpty {}
        #expect(mixer.silenceFilledSamples == 6000 - 1920)
        _ = [Float](repeating: 0.2, count: 2 * 3000).withUnsafeBufferPointer { mic.write($0) }
        _ = Self.pull(mixer, app: app, mic: mic)
        #expect(mixer.lateDroppedSamples == 1920, "the debt is capped at the 40 ms bound")
    }
}
