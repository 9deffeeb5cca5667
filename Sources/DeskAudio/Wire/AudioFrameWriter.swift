/// Lays out AudioFrame bytes, version 1, in a buffer the caller owns. No allocation.
public enum AudioFrameWriter {
    /// Bytes needed for the largest frame: header plus the largest Opus packet.
    public static let maxFrameBytes = AudioFrameHeader.byteCount + OpusFrameEncoder.maxPacketBytes

    /// Writes `header` into the first 36 bytes of `buffer` (which holds at least that many).
    public static func write(_ header: AudioFrameHeader, into buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count >= AudioFrameHeader.byteCount)
        let magic = AudioFrameHeader.magic
        buffer[0] = magic.0
        buffer[1] = magic.1
        buffer[2] = magic.2
        buffer[3] = magic.3
        buffer[4] = AudioFrameHeader.currentVersion
        buffer[AudioFrameHeader.flagsOffset] = header.flags.rawValue
        buffer[6] = header.channels
        buffer[7] = header.codec
        store(header.sampleRate, at: 8, in: buffer)
        store(header.sequence, at: 12, in: buffer)
        store(header.sampleClock, at: 16, in: buffer)
        store(header.captureTimeNs, at: AudioFrameHeader.captureTimeOffset, in: buffer)
        store(header.frameSamples, at: 32, in: buffer)
        store(header.payloadLength, at: 34, in: buffer)
    }

    @inline(__always)
    private static func store<T: FixedWidthInteger>(
        _ value: T, at offset: Int, in buffer: UnsafeMutableRawBufferPointer
    ) {
        buffer.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
    }
}
