import DeskAudio
import DeskAudioC
import Foundation
import Testing

/// The RTP packetizer and its SDP, through the C ABI and in Swift, on frames laid out by
/// AudioFrameWriter (header fields chosen) and on frames the real encoder made.
@Suite struct RTPPacketizerTests {
    /// An RTP packet's fields, read as a receiver would (RFC 3550 §5.1, RFC 8285).
    struct Packet {
        let bytes: [UInt8]
        var version: UInt8 { bytes[0] >> 6 }
        var hasExtension: Bool { bytes[0] & 0x10 != 0 }
        var marker: Bool { bytes[1] & 0x80 != 0 }
        var payloadType: UInt8 { bytes[1] & 0x7F }
        var sequence: UInt16 { UInt16(bytes[2]) << 8 | UInt16(bytes[3]) }
        var timestamp: UInt32 { bytes[4..<8].reduce(0) { $0 << 8 | UInt32($1) } }
        var ssrc: UInt32 { bytes[8..<12].reduce(0) { $0 << 8 | UInt32($1) } }
        /// The extension block's length in bytes (its 4-byte header included), 0 without one.
        var extensionBytes: Int { hasExtension ? 4 + 4 * (Int(bytes[14]) << 8 | Int(bytes[15])) : 0 }
        var payload: [UInt8] { Array(bytes[(12 + extensionBytes)...]) }
    }

    /// AudioFrame bytes with the fields given and `payload` as the Opus packet.
    static func frame(
        sequence: UInt32, sampleClock: UInt64, flags: AudioFrameHeader.Flags = .app, samples: UInt16 = 480,
        payload: [UInt8] = [0xF8, 0xFF, 0xFE], mapping: OpusChannelMapping? = nil, captureTimeNs: UInt64 = 5_000_000_000
    ) -> [UInt8] {
        let header = AudioFrameHeader(
            flags: flags, channels: mapping.map { $0.channels } ?? 2, codec: mapping == nil ? 1 : 2, sequence: sequence,
            sampleClock: sampleClock, captureTimeNs: captureTimeNs, frameSamples: samples,
            payloadLength: UInt16(payload.count), mapping: mapping)
        var bytes = [UInt8](repeating: 0, count: header.headerByteCount)
        bytes.withUnsafeMutableBytes { AudioFrameWriter.write(header, into: $0) }
        return bytes + payload
    }

    /// A call's negative status, as an error.
    struct Status: Error { let code: Int32 }

    /// Packetizes `frame` through the C ABI: the packet, or the negative status.
    static func packetize(_ packetizer: deskaudio_rtp_packetizer?, _ frame: [UInt8], capacity: Int = 1500)
        -> Result<Packet, Status>
    {
        var out = [UInt8](repeating: 0xAA, count: capacity)
        let length = frame.withUnsafeBufferPointer { input in
            out.withUnsafeMutableBufferPointer { deskaudio_rtp_packetize(packetizer, input.baseAddress, input.count, $0.baseAddress, capacity) }
        }
        return length >= 0 ? .success(Packet(bytes: Array(out[0..<Int(length)]))) : .failure(Status(code: length))
    }

    static func sdp(_ packetizer: deskaudio_rtp_packetizer?, _ address: String = "127.0.0.1", port: UInt16 = 5004) -> String? {
        var out = [CChar](repeating: 0, count: Int(DESKAUDIO_RTP_MAX_SDP))
        let length = deskaudio_rtp_sdp(packetizer, address, port, &out, out.count)
        return length >= 0 ? String(cString: out) : nil
    }

    @Test func headerFieldsAndAPayloadByteForByte() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(111, 0x1234_5678))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        let frame = Self.frame(sequence: 0, sampleClock: 0, payload: Array(0..<200).map { UInt8($0) })
        let packet = try Self.packetize(packetizer, frame).get()
        #expect(packet.version == 2 && !packet.hasExtension && packet.bytes[0] & 0x2F == 0, "V=2, no padding, no CSRC")
        #expect(packet.payloadType == 111 && packet.ssrc == 0x1234_5678)
        #expect(packet.marker, "the first packet starts a talkspurt")
        #expect(packet.payload == Array(frame[36...]), "the payload is the frame's Opus packet, byte for byte")
        #expect(packet.bytes.count == 12 + 200)
    }

    @Test func timestampsFollowTheSampleClockAndTheGateGapSetsTheMarkerButNoSequenceHole() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(96, 7))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        var packets: [Packet] = []
        for index in 0..<5 {
            packets.append(try Self.packetize(packetizer, Self.frame(sequence: UInt32(index), sampleClock: UInt64(index) * 480)).get())
        }
        // The gate held 10 s back (1000 frames): the frames' sequence runs on by one, their clock by the gap.
        let resumedClock: UInt64 = 5 * 480 + 480_000
        packets.append(try Self.packetize(packetizer, Self.frame(sequence: 5, sampleClock: resumedClock, flags: [.app, .afterGap])).get())
        packets.append(try Self.packetize(packetizer, Self.frame(sequence: 6, sampleClock: resumedClock + 480)).get())
        let first = packets[0]
        for (index, packet) in packets.enumerated() {
            #expect(packet.sequence == first.sequence &+ UInt16(index), "packet \(index): no hole in the sequence")
        }
        for index in 1..<5 {
            #expect(packets[index].timestamp == first.timestamp &+ UInt32(index * 480))
            #expect(!packets[index].marker)
        }
        #expect(packets[5].timestamp == first.timestamp &+ UInt32(resumedClock), "the jump equals the gap in samples")
        #expect(packets[5].marker, "the first packet after the gap has the marker bit")
        #expect(!packets[6].marker && packets[6].timestamp == packets[5].timestamp &+ 480)
    }

    @Test func framesLostBeforeThePacketizerLeaveAHoleAndARestartGoesOn() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(96, 7))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        let a = try Self.packetize(packetizer, Self.frame(sequence: 10, sampleClock: 4800)).get()
        // Frames 11 and 12 dropped by the sender (AFTER_LOSS): a hole of two, the clock on by three frames.
        let b = try Self.packetize(packetizer, Self.frame(sequence: 13, sampleClock: 4800 + 3 * 480, flags: [.app, .afterLoss])).get()
        #expect(b.sequence == a.sequence &+ 3 && b.timestamp == a.timestamp &+ 1440 && !b.marker)
        // A new capture: its sequence and sample clock start again at 0.
        let c = try Self.packetize(packetizer, Self.frame(sequence: 0, sampleClock: 0, flags: [.app, .afterGap])).get()
        #expect(c.sequence == b.sequence &+ 1, "a restart is no loss")
        #expect(c.timestamp == b.timestamp &+ 480, "timestamps go on where the last packet ended")
        #expect(c.marker)
        let d = try Self.packetize(packetizer, Self.frame(sequence: 1, sampleClock: 480)).get()
        #expect(d.sequence == c.sequence &+ 1 && d.timestamp == c.timestamp &+ 480 && !d.marker)
    }

    @Test func fiveMillisecondFramesAdvanceBy240AndSayPtime5() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(100, 1))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        let a = try Self.packetize(packetizer, Self.frame(sequence: 0, sampleClock: 0, samples: 240)).get()
        let b = try Self.packetize(packetizer, Self.frame(sequence: 1, sampleClock: 240, samples: 240)).get()
        #expect(b.timestamp == a.timestamp &+ 240)
        let sdp = try #require(Self.sdp(packetizer))
        #expect(sdp.contains("a=ptime:5\r\n") && sdp.contains("minptime=5;"))
    }

    @Test func eachBadInputHasItsOwnCodeAndTheStreamGoesOnUnchanged() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(96, 7))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        let first = try Self.packetize(packetizer, Self.frame(sequence: 0, sampleClock: 0)).get()
        let frame = Self.frame(sequence: 1, sampleClock: 480)
        #expect(Self.packetize(packetizer, frame, capacity: 12 + 2).failure == deskaudio_status.DESKAUDIO_ERROR_BUFFER_TOO_SMALL.rawValue)
        #expect(String(cString: deskaudio_last_error()!).contains("15 bytes into 14"))
        #expect(Self.packetize(packetizer, Array(frame.dropLast())).failure == deskaudio_status.DESKAUDIO_ERROR_FRAME_TRUNCATED.rawValue)
        #expect(Self.packetize(packetizer, [0, 1, 2, 3, 4, 5]).failure == deskaudio_status.DESKAUDIO_ERROR_FRAME_MAGIC.rawValue)
        let surround = Self.frame(
            sequence: 1, sampleClock: 480, payload: [0xF8, 0xF8, 0xF8, 0xFF],
            mapping: OpusChannelMapping(family: 1, streams: 4, coupledStreams: 2, table: [0, 4, 1, 2, 3, 5], channels: 6))
        #expect(Self.packetize(packetizer, surround).failure == deskaudio_status.DESKAUDIO_ERROR_RTP_FORMAT.rawValue)
        #expect(String(cString: deskaudio_last_error()!).contains("a 5.1 frame in a stereo RTP stream"))
        var out = [UInt8](repeating: 0, count: 64)
        #expect(deskaudio_rtp_packetize(nil, frame, frame.count, &out, 64) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(deskaudio_rtp_packetize(packetizer, nil, 0, &out, 64) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        // None of it moved the stream: the next good frame follows the first.
        let next = try Self.packetize(packetizer, frame).get()
        #expect(next.sequence == first.sequence &+ 1 && next.timestamp == first.timestamp &+ 480 && !next.marker)
        // Out-of-range settings.
        #expect(deskaudio_rtp_packetizer_create(8, 0) == nil, "a static payload type")
        #expect(deskaudio_rtp_packetizer_create(128, 0) == nil)
        #expect(deskaudio_rtp_packetizer_set_abs_capture_time(packetizer, 15) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(deskaudio_rtp_packetizer_set_format(packetizer, 2, 480) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue,
            "the format is fixed once a packet is made")
        var small = [CChar](repeating: 0, count: 40)
        #expect(deskaudio_rtp_sdp(packetizer, "127.0.0.1", 5004, &small, 40) == deskaudio_status.DESKAUDIO_ERROR_BUFFER_TOO_SMALL.rawValue)
        #expect(Self.sdp(packetizer, "127.0.0.1\r\na=evil") == nil, "an address that would break the SDP's lines")
    }

    @Test func aStereoSDPAsRFC7587SaysAndWhatFFmpegReads() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(111, 0xCAFE))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        #expect(deskaudio_rtp_packetizer_set_abs_capture_time(packetizer, 3) == 0)
        let sdp = try #require(Self.sdp(packetizer, "::1", port: 40000))
        #expect(
            sdp == "v=0\r\no=- 51966 1 IN IP6 ::1\r\ns=DeskAudio\r\nc=IN IP6 ::1\r\nt=0 0\r\nm=audio 40000 RTP/AVP 111\r\n"
                + "a=rtpmap:111 opus/48000/2\r\na=fmtp:111 minptime=10;stereo=1;sprop-stereo=1\r\na=ptime:10\r\n"
                + "a=extmap:3 http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time\r\n"
                + "a=ssrc:51966 cname:deskaudio\r\na=sendonly\r\n")
        var exact = [CChar](repeating: 0, count: sdp.utf8.count + 1)
        #expect(deskaudio_rtp_sdp(packetizer, "::1", 40000, &exact, exact.count) == Int32(sdp.utf8.count), "room for the text and its NUL is enough")
    }

    @Test func surroundStreamsAreMultiopusWithTheMappingInWebRTCsOrder() throws {
        for (channels, mapping, streams) in [(6, "0,1,4,5,2,3", "num_streams=4;coupled_streams=2"), (8, "0,1,6,7,4,5,2,3", "num_streams=5;coupled_streams=3")] {
            let packetizer = try #require(deskaudio_rtp_packetizer_create(109, 9))
            defer { deskaudio_rtp_packetizer_destroy(packetizer) }
            #expect(deskaudio_rtp_packetizer_set_format(packetizer, Int32(channels), 480) == 0)
            let sdp = try #require(Self.sdp(packetizer))
            #expect(sdp.contains("a=rtpmap:109 multiopus/48000/\(channels)\r\n"))
            #expect(sdp.contains("a=fmtp:109 channel_mapping=\(mapping);\(streams);minptime=10\r\n"), "\(sdp)")
            // A stereo frame does not go into it.
            #expect(Self.packetize(packetizer, Self.frame(sequence: 0, sampleClock: 0)).failure == deskaudio_status.DESKAUDIO_ERROR_RTP_FORMAT.rawValue)
        }
        let other = deskaudio_rtp_packetizer_create(96, 1)
        defer { deskaudio_rtp_packetizer_destroy(other) }
        #expect(deskaudio_rtp_packetizer_set_format(other, 3, 480) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        #expect(deskaudio_rtp_packetizer_set_format(other, 2, 500) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
    }

    @Test func theDeclaredSurroundMappingIsTheEncodersAndRealFramesGoThrough() throws {
        for layout in [ChannelLayout.surround51, .surround71] {
            let encoder = try OpusFrameEncoder(layout: layout)
            let declared = try RTPStreamFormat(declaredChannels: layout.channels, frameSamples: 480)
            #expect(declared.mapping == encoder.mapping, "\(layout)")
            // 1.5 s of each channel's own tone, encoded as a capture would.
            let frames = try SurroundCodecTests.encode(SurroundCodecTests.signal(layout), layout)
            let packetizer = try RTPPacketizer(payloadType: 96, ssrc: 1)
            try packetizer.declare(declared)
            var out = [UInt8](repeating: 0, count: RTPPacketizer.maxPacketByteCount)
            for frame in frames {
                let length = try frame.withUnsafeBytes { input in try out.withUnsafeMutableBytes { try packetizer.packetize(input, into: $0) } }
                #expect(Array(out[12..<length]) == Array(frame[(38 + layout.channels)...]), "the multistream packet as it was")
            }
            #expect(packetizer.packets == UInt64(frames.count) && frames.count >= 100)
        }
        #expect(RTPPacketizer.maxPacketByteCount == Int(DESKAUDIO_RTP_MAX_PACKET))
    }

    @Test func absCaptureTimeCarriesTheFramesCaptureTimeAsNTP() throws {
        let packetizer = try #require(deskaudio_rtp_packetizer_create(96, 1))
        defer { deskaudio_rtp_packetizer_destroy(packetizer) }
        #expect(deskaudio_rtp_packetizer_set_abs_capture_time(packetizer, 5) == 0)
        let captured = MonotonicClock.nowNs() - 20_000_000  // 20 ms ago
        let packet = try Self.packetize(packetizer, Self.frame(sequence: 0, sampleClock: 0, captureTimeNs: captured)).get()
        #expect(packet.hasExtension && packet.extensionBytes == 16)
        #expect(Array(packet.bytes[12..<16]) == [0xBE, 0xDE, 0x00, 0x03], "RFC 8285 one-byte form, 3 words")
        #expect(packet.bytes[16] == 5 << 4 | 7, "ID 5, 8 bytes")
        #expect(Array(packet.bytes[25..<28]) == [0, 0, 0], "padding")
        let ntp = packet.bytes[17..<25].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let unixSeconds = Double(ntp >> 32) - 2_208_988_800 + Double(ntp & 0xFFFF_FFFF) / 4_294_967_296
        let expected = Date().timeIntervalSince1970 - 0.020
        #expect(abs(unixSeconds - expected) < 0.5, "NTP time \(unixSeconds) vs wall clock less 20 ms \(expected)")
        #expect(packet.payload == [0xF8, 0xFF, 0xFE])
    }
}

extension Result where Failure == RTPPacketizerTests.Status {
    /// The failure's status, or nil on success.
    fileprivate var failure: Int32? {
        if case .failure(let error) = self { return error.code }
        return nil
    }
}
