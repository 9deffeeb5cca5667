import Glibc

/// Turns one stream of AudioFrames into RTP packets: the RFC 3550 header, then the frame's
/// Opus packet unchanged as the payload (RFC 7587; a surround frame's multistream packet as
/// WebRTC's `multiopus` carries it). A host drives it from its frame callback and sends each
/// packet on its own transport (docs/rtp.md).
///
/// - Timestamps run on the 48 kHz clock from the frames' sample clock: a gate gap advances
///   them by the gap, and the first packet after it has the marker bit (so has the first
///   packet of all).
/// - Sequence numbers count packets sent, so the gate leaves no hole; a hole in the frames'
///   own sequence (frames lost before they reached the packetizer) is a hole here too, for
///   the receiver to conceal.
/// - A capture restarted (its sample clock starting again) continues the timestamps where
///   they were, with the marker bit.
/// - With an `abs-capture-time` extension ID set, each packet carries the frame's capture
///   time as an NTP timestamp (RFC 8285 one-byte header extension).
///
/// Per packet: no allocation, no lock (one thread at a time uses it, as a decoder).
public final class RTPPacketizer {
    /// Bytes of the fixed RTP header.
    public static let headerByteCount = 12
    /// Bytes the abs-capture-time extension adds: its 4-byte block header, a 1-byte element
    /// header, 8 bytes of NTP time, 3 of padding.
    public static let absCaptureTimeByteCount = 16
    /// The largest packet: header, extension and a 7.1 frame's largest multistream packet.
    public static let maxPacketByteCount =
        headerByteCount + absCaptureTimeByteCount + 1275 * 5 + 2 * 4
    /// The URI that names the abs-capture-time extension in an SDP's `a=extmap`.
    public static let absCaptureTimeURI = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"

    /// The RTP payload type (dynamic: 96–127, or 35–63 as WebRTC stacks also use).
    public let payloadType: UInt8
    /// The stream's synchronization source identifier.
    public let ssrc: UInt32
    /// The stream's format: declared, or the first frame's; fixed once a packet is made.
    public private(set) var format: RTPStreamFormat = .standard
    /// The abs-capture-time extension's ID (1–14), or 0 when packets carry no extension.
    public private(set) var absCaptureTimeID: UInt8 = 0
    /// Packets made so far.
    public private(set) var packets: UInt64 = 0

    /// The sequence number of the next packet.
    private var sequence: UInt16
    /// Added to a frame's sample clock to give its RTP timestamp (random at the start,
    /// moved when a capture restart sets the sample clock back).
    private var timestampOffset: UInt32
    /// The previous frame's sequence, sample clock and length.
    private var previous: (sequence: UInt32, sampleClock: UInt64, samples: UInt64)?
    /// Whether the format was declared (then the first frame must fit it, not set it).
    private var formatDeclared = false
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC at creation, ns: capture times to wall time.
    private let realtimeOffsetNs: Int64

    /// A packetizer for one stream; `ssrc` 0 picks one at random. The first sequence number
    /// and timestamp are random (RFC 3550 §5.1).
    public init(payloadType: UInt8, ssrc: UInt32) throws(DeskAudioError) {
        guard (96...127).contains(payloadType) || (35...63).contains(payloadType) else {
            throw .invalidArgument("RTP payload type \(payloadType): a dynamic one, 96-127 (or 35-63)")
        }
        self.payloadType = payloadType
        var random = SystemRandomNumberGenerator()
        self.ssrc = ssrc != 0 ? ssrc : UInt32.random(in: 1...UInt32.max, using: &random)
        sequence = UInt16.random(in: 0...UInt16.max, using: &random)
        timestampOffset = UInt32.random(in: 0...UInt32.max, using: &random)
        var realtime = timespec()
        clock_gettime(CLOCK_REALTIME, &realtime)
        let realtimeNs = Int64(realtime.tv_sec) * 1_000_000_000 + Int64(realtime.tv_nsec)
        realtimeOffsetNs = realtimeNs - Int64(LibraryClock.system.nowNs())
    }

    /// Declares the stream's format before the first packet, for an SDP written before any
    /// frame (`RTPStreamFormat(declaredChannels:frameSamples:)`, or the capture's own).
    public func declare(_ format: RTPStreamFormat) throws(DeskAudioError) {
        guard packets == 0 else { throw .invalidArgument("the RTP stream's format is fixed once a packet is made") }
        self.format = format
        formatDeclared = true
    }

    /// Puts the abs-capture-time header extension on every packet, with `id` (1–14) as the
    /// SDP's `a=extmap` names it; 0 takes it off.
    public func setAbsCaptureTime(id: Int) throws(DeskAudioError) {
        guard (0...14).contains(id) else { throw .invalidArgument("header extension ID \(id): 1-14, or 0 for none") }
        absCaptureTimeID = UInt8(id)
    }

    /// Writes the RTP packet for the AudioFrame `frame` into `packet`; returns its length.
    /// Throws `.invalidFrame` for bytes that are not an AudioFrame, `.formatMismatch` for a
    /// frame of other channels than the stream's, `.bufferTooSmall` when `packet` cannot hold
    /// it (`maxPacketByteCount` always can); the stream's state is unchanged then.
    public func packetize(_ frame: UnsafeRawBufferPointer, into packet: UnsafeMutableRawBufferPointer)
        throws(DeskAudioError) -> Int
    {
        let parsed: AudioFrameParser.Frame
        do throws(AudioFrameParser.ParseError) {
            parsed = try AudioFrameParser.parse(frame)
        } catch {
            throw .invalidFrame(error)
        }
        let header = parsed.header
        if packets > 0 || formatDeclared {
            guard format.accepts(header) else {
                throw .formatMismatch(
                    "a \(RTPStreamFormat(of: header).name) frame in a \(format.name) RTP stream (its SDP says \(format.name))")
            }
        }
        let extensionBytes = absCaptureTimeID == 0 ? 0 : Self.absCaptureTimeByteCount
        let length = Self.headerByteCount + extensionBytes + parsed.payload.count
        guard packet.count >= length, let base = packet.baseAddress else {
            throw .bufferTooSmall("an RTP packet of \(length) bytes into \(packet.count)")
        }

        var marker = packets == 0 || header.flags.contains(.afterGap)
        if let previous {
            let step = header.sequence &- previous.sequence
            // A hole of lost frames stays a hole; a restart or a repeat just goes on by one.
            sequence &+= (1...1000).contains(step) ? UInt16(step) : 1
            let advance = header.sampleClock &- previous.sampleClock
            if advance == 0 || advance >= 1 << 31 {
                // The sample clock started again (a new capture) or stood still: go on from
                // where the last packet ended, as a new talkspurt.
                let expected = UInt32(truncatingIfNeeded: previous.sampleClock &+ previous.samples) &+ timestampOffset
                timestampOffset = expected &- UInt32(truncatingIfNeeded: header.sampleClock)
                marker = true
            }
        } else if !formatDeclared {
            format = RTPStreamFormat(of: header)
        }
        let timestamp = UInt32(truncatingIfNeeded: header.sampleClock) &+ timestampOffset

        base.storeBytes(of: 0x80 | (extensionBytes > 0 ? 0x10 : 0), toByteOffset: 0, as: UInt8.self)
        base.storeBytes(of: (marker ? 0x80 : 0) | payloadType, toByteOffset: 1, as: UInt8.self)
        base.storeBytes(of: sequence.bigEndian, toByteOffset: 2, as: UInt16.self)
        base.storeBytes(of: timestamp.bigEndian, toByteOffset: 4, as: UInt32.self)
        base.storeBytes(of: ssrc.bigEndian, toByteOffset: 8, as: UInt32.self)
        if extensionBytes > 0 {
            writeAbsCaptureTime(header.captureTimeNs, at: base + Self.headerByteCount)
        }
        if let payload = parsed.payload.baseAddress {
            (base + Self.headerByteCount + extensionBytes).copyMemory(from: payload, byteCount: parsed.payload.count)
        }

        previous = (header.sequence, header.sampleClock, UInt64(header.frameSamples))
        packets += 1
        return length
    }

    /// The SDP (RFC 4566) of this stream sent to `address` (IPv4, IPv6 or a host name) and
    /// `port`, as a receiver (ffmpeg, GStreamer, an SFU's RTP input) reads it; its media
    /// section, from `m=`, is what a WebRTC offer takes.
    public func sessionDescription(address: String, port: UInt16) throws(DeskAudioError) -> String {
        try RTPSessionDescription(
            format: format, payloadType: payloadType, ssrc: ssrc, absCaptureTimeID: absCaptureTimeID
        ).text(address: address, port: port)
    }

    /// Writes `sessionDescription(address:port:)` into `buffer`, NUL-terminated, as C
    /// callers take it; returns its length without the NUL. Throws `.bufferTooSmall` when the
    /// text and its NUL do not fit (1024 bytes always do).
    public func writeSessionDescription(address: String, port: UInt16, into buffer: UnsafeMutableRawBufferPointer)
        throws(DeskAudioError) -> Int
    {
        let text = try sessionDescription(address: address, port: port)
        let count = text.utf8.count
        guard count < buffer.count, let base = buffer.baseAddress else {
            throw .bufferTooSmall("an SDP of \(count) bytes and its NUL into \(buffer.count)")
        }
        UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]).copyBytes(from: text.utf8)
        base.storeBytes(of: 0, toByteOffset: count, as: UInt8.self)
        return count
    }

    /// The RFC 8285 one-byte extension block with the abs-capture-time element: the capture
    /// time as a 64-bit NTP timestamp (seconds since 1900, 32.32 fixed point).
    private func writeAbsCaptureTime(_ captureTimeNs: UInt64, at pointer: UnsafeMutableRawPointer) {
        let wallNs = UInt64(clamping: Int64(clamping: captureTimeNs) &+ realtimeOffsetNs)
        let seconds = wallNs / 1_000_000_000 + 2_208_988_800  // 1900 to 1970
        let fraction = (wallNs % 1_000_000_000) << 32 / 1_000_000_000
        let ntp = (seconds << 32) | fraction
        pointer.storeBytes(of: UInt16(0xBEDE).bigEndian, toByteOffset: 0, as: UInt16.self)
        pointer.storeBytes(of: UInt16(3).bigEndian, toByteOffset: 2, as: UInt16.self)  // 32-bit words after it
        pointer.storeBytes(of: absCaptureTimeID << 4 | 7, toByteOffset: 4, as: UInt8.self)  // 8 bytes of data
        pointer.storeBytes(of: ntp.bigEndian, toByteOffset: 5, as: UInt64.self)
        (pointer + 13).initializeMemory(as: UInt8.self, repeating: 0, count: 3)
    }
}
