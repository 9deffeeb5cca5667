/// Lays out AudioFrame bytes, version 1 or 2, in a buffer the caller owns. No allocation.
public enum AudioFrameWriter {
    /// Bytes needed for the largest mono or stereo frame: header plus the largest Opus packet.
    public static let maxFrameBytes = AudioFrameHeader.byteCount + OpusFrameEncoder.maxPacketBytes

    /// Bytes needed for the largest frame of `layout`.
    public static func maxFrameBytes(for layout: ChannelLayout) -> Int {
        layout.mappingFamily == 0
            ? maxFrameBytes : AudioFrameHeader.byteCount + 2 + layout.channels + OpusFrameEncoder.maxPacketBytes(for: layout)
    }

    /// Writes `header` into the first `header.headerByteCount` bytes of `buffer` (which holds
    /// at least that many): version 2 when it has a channel mapping, else version 1.
    public static func write(_ header: AudioFrameHeader, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= header.headerByteCount)
        let magic = AudioFrameHeader.magic
        typealias Offset = AudioFrameHeader.Offset
        buffer[Offset.magic] = magic.0
        buffer[Offset.magic + 1] = magic.1
        buffer[Offset.magic + 2] = magic.2
        buffer[Offset.magic + 3] = magic.3
        buffer[Offset.version] = header.version
        buffer[Offset.flags] = header.flags.rawValue
        buffer[Offset.channels] = header.channels
        buffer[Offset.codec] = header.codec
        store(header.sampleRate, at: Offset.sampleRate, in: buffer)
        store(header.sequence, at: Offset.sequence, in: buffer)
        store(header.sampleClock, at: Offset.sampleClock, in: buffer)
        store(header.captureTimeNs, at: Offset.captureTime, in: buffer)
        store(header.frameSamples, at: Offset.frameSamples, in: buffer)
        store(header.payloadLength, at: Offset.payloadLength, in: buffer)
        guard let mapping = header.mapping else { return }
        buffer[Offset.streams] = mapping.streams
        buffer[Offset.coupledStreams] = mapping.coupledStreams
        for channel in 0..<Int(mapping.channels) { buffer[Offset.mappingTable + channel] = mapping.table[channel] }
    }

    @inline(__always)
    private static func store<T: FixedWidthInteger>(
        _ value: T, at offset: Int, in buffer: UnsafeMutableRawBufferPointer
    ) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
