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

    @Test func lateAudioThatFitsBesideTheOtherSourceIsMixedNotDropped() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 2000))
        let mic = Self.ring([])
        #expect(
            Self.pull(mixer, app: app, mic: mic).0.count == 2 * 80, "80 samples beyond 40 ms go out alone")
        // The mic's late 180 samples arrive while the app holds 1920: all of them are mixed.
        _ = [Float](repeating: 0.2, count: 2 * 180).withUnsafeBufferPointer { mic.write($0) }
        let (mixed, sources) = Self.pull(mixer, app: app, mic: mic)
        #expect(sources == [.app, .mic])
        #expect(mixed.count == 2 * 180 && mixed.allSatisfy { abs($0 - 0.3) < 1e-6 })
        #expect(mixer.lateDroppedSamples == 0 && mixer.silenceFilledSamples == 80)
    }

    /// A microphone whose server path runs 50 ms behind the app audio, both delivering 10 ms
    /// at a time (seen with PulseAudio's module-remap-source): after the first 10 ms, every
    /// mic sample is mixed and the output keeps pace with the app.
    @Test func aSourceSteadily50msLateIsShiftedNotLost() {
        let mixer = SourceMixer()
        let app = SampleRing(minimumFloats: 16384)
        let mic = SampleRing(minimumFloats: 16384)
        let tick = [Float](repeating: 0.1, count: 960)
        var output = [Float](repeating: 0, count: 8192)
        var emitted = 0
        var mixedFloats = 0
        for step in 0..<200 {
            _ = tick.withUnsafeBufferPointer { app.write($0) }
            if step >= 5 { _ = tick.withUnsafeBufferPointer { mic.write($0) } }
            while true {
                let (count, sources) = output.withUnsafeMutableBufferPointer {
                    mixer.pull(app: app, mic: mic, into: $0)
                }
                if count == 0 { break }
                emitted += count
                if sources == [.app, .mic] { mixedFloats += count }
            }
        }
        #expect(mixer.lateDroppedSamples == 0)
        #expect(mixer.silenceFilledSamples == 480, "only the first 10 ms beyond the 40 ms bound")
        #expect(mixedFloats == 195 * 960, "every mic sample delivered is mixed")
        #expect(emitted + app.availableFloats == 200 * 960, "output paced by the app, nothing extra")
        #expect(app.availableFloats <= 1920 * 2, "the app waits 40 ms at most")
    }

    @Test func aBacklogAfterALongStallIsDroppedBeyondWhatTheOtherSourceHolds() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 6000))
        let mic = Self.ring([])
        while !Self.pull(mixer, app: app, mic: mic).0.isEmpty {}
        #expect(mixer.silenceFilledSamples == 6000 - 1920)
        // 3000 mic samples arrive at once while the app holds 1920: 1080 are a backlog.
        _ = [Float](repeating: 0.2, count: 2 * 3000).withUnsafeBufferPointer { mic.write($0) }
        let (mixed, sources) = Self.pull(mixer, app: app, mic: mic)
        #expect(mixer.lateDroppedSamples == 1080)
        #expect(sources == [.app, .mic] && mixed.count == 2 * 1920)
        #expect(app.availableFloats == 0 && mic.availableFloats == 0)
    }

    @Test func theDebtIsCappedAtThe40msBound() {
        let mixer = SourceMixer()
        let app = Self.ring([Float](repeating: 0.1, count: 2 * 6000))
        let mic = Self.ring([])
        while !Self.pull(mixer, app: app, mic: mic).0.isEmpty {}
        var sink = [Float](repeating: 0, count: 2 * 1920)
        _ = sink.withUnsafeMutableBufferPointer { app.read(into: $0) }  // the app goes quiet
        _ = [Float](repeating: 0.2, count: 2 * 5000).withUnsafeBufferPointer { mic.write($0) }
        _ = Self.pull(mixer, app: app, mic: mic)
        #expect(mixer.lateDroppedSamples == 1920, "at most 40 ms of a backlog is dropped")
    }

    /// `pull` over any list of rings, as the worker mixes a capture's sources.
    static func pull(_ mixer: SourceMixer, _ sources: [(SampleRing, AudioFrameHeader.Flags)]) -> (
        [Float], AudioFrameHeader.Flags
    ) {
        let inputs = MixerInputs()
        for (slot, source) in sources.enumerated() { inputs.append(source.0, flags: source.1, slot: slot) }
        var output = [Float](repeating: .nan, count: 8192)
        let (count, flags) = output.withUnsafeMutableBufferPointer { mixer.pull(inputs, into: $0) }
        return (Array(output[0..<count]), flags)
    }

    @Test func anyNumberOfSourcesAreSummedWhereAllHaveAudio() {
        let rings = [0.1, 0.2, -0.05, 0.3].map { Self.ring([Float](repeating: Float($0), count: 800)) }
        let (mixed, flags) = Self.pull(SourceMixer(), rings.enumerated().map { ($1, $0 == 3 ? .mic : .app) })
        #expect(mixed.count == 800 && mixed.allSatisfy { abs($0 - 0.55) < 1e-6 })
        #expect(flags == [.app, .mic])
        #expect(rings.allSatisfy { $0.availableFloats == 0 })
    }

    /// Three sources, one lagging: the same 40 ms bound as for two; the others go on together
    /// (never one alone while another still has audio), and the lagging one's backlog beyond
    /// what the others hold is dropped when it arrives.
    @Test func withThreeSourcesALaggingOneIsWaitedFor40msAtMost() {
        let mixer = SourceMixer()
        let first = Self.ring([Float](repeating: 0.1, count: 2 * 2020))
        let second = Self.ring([Float](repeating: 0.2, count: 2 * 2000))
        let lagging = Self.ring([])
        let sources: [(SampleRing, AudioFrameHeader.Flags)] = [(first, .app), (second, .app), (lagging, .mic)]
        let (mixed, flags) = Self.pull(mixer, sources)
        #expect(mixed.count == 2 * 100 && flags == [.app], "100 samples beyond 1920 go out without the lagging one")
        #expect(mixed.allSatisfy { abs($0 - 0.3) < 1e-6 }, "the two that have audio are mixed")
        #expect(mixer.silenceFilledSamples == 100)
        _ = [Float](repeating: 0.4, count: 2 * 2000).withUnsafeBufferPointer { lagging.write($0) }
        let (caughtUp, together) = Self.pull(mixer, sources)
        #expect(together == [.app, .mic])
        #expect(mixer.lateDroppedSamples == 80, "the backlog beyond the others' 1920, up to the 100 owed")
        #expect(caughtUp.allSatisfy { abs($0 - 0.7) < 1e-6 })
    }
}
