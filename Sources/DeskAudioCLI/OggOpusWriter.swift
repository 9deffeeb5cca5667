import COgg
import DeskAudio
import Glibc

/// Writes Opus packets into an Ogg Opus file (RFC 7845), pages made by libogg.
///
/// The newest packet is held back until the next one comes, so that `finish()` can mark
/// the last packet end-of-stream.
final class OggOpusWriter {
    /// The file's path, as given.
    let path: String
    /// Bytes written to the file so far.
    private(set) var bytesWritten = 0
    /// Why writing failed, once it has; nothing more is written then.
    private(set) var failure: String?

    private let file: UnsafeMutablePointer<FILE>
    private var stream = ogg_stream_state()
    private var granule: Int64 = 0
    private var packetNumber: Int64 = 0
    private var held = [UInt8]()
    private var heldSamples: Int64 = 0
    private var holdsPacket = false

    /// Creates `path` (truncating it) and writes the OpusHead and OpusTags pages for a
    /// 48 kHz stream whose decoder discards `preSkip` samples at the start, its channels
    /// made as `mapping` says (family 0: one mono or stereo stream; family 1: surround in
    /// Vorbis channel order, RFC 7845 §5.1.1.2).
    init(path: String, preSkip: Int32, vendor: String, mapping: OpusChannelMapping) throws(CLIFailure) {
        guard let file = fopen(path, "wb") else {
            throw CLIFailure("cannot write \(path): \(String(cString: strerror(errno)))")
        }
        self.path = path
        self.file = file
        held.reserveCapacity(1275)
        ogg_stream_init(&stream, Int32.random(in: 1...Int32.max))

        var head: [UInt8] = Array("OpusHead".utf8) + [1, mapping.channels]  // version 1
        head += littleEndian(UInt16(preSkip)) + littleEndian(UInt32(48_000))
        head += [0, 0, mapping.family]  // output gain 0
        if mapping.family != 0 {
            head += [mapping.streams, mapping.coupledStreams]
            head += (0..<Int(mapping.channels)).map { mapping.table[$0] }
        }
        submit(&head, samples: 0, endOfStream: false)
        flushPages()

        var tags: [UInt8] = Array("OpusTags".utf8) + littleEndian(UInt32(vendor.utf8.count))
        tags += Array(vendor.utf8) + littleEndian(UInt32(0))  // no user comments
        submit(&tags, samples: 0, endOfStream: false)
        flushPages()
        if let failure { throw CLIFailure(failure) }
    }

    deinit {
        ogg_stream_clear(&stream)
    }

    /// Adds one Opus packet that decodes to `samples` samples per channel.
    func write(_ packet: UnsafeRawBufferPointer, samples: Int) {
        if holdsPacket { submit(&held, samples: heldSamples, endOfStream: false) }
        held.replaceSubrange(held.indices, with: packet)
        heldSamples = Int64(samples)
        holdsPacket = true
    }

    /// Writes the held packet as the last one, flushes and closes the file; throws if
    /// any write failed. Call once, after at least one `write`.
    func finish() throws(CLIFailure) {
        if holdsPacket { submit(&held, samples: heldSamples, endOfStream: true) }
        holdsPacket = false
        flushPages()
        if fclose(file) != 0, failure == nil { failure = String(cString: strerror(errno)) }
        if let failure { throw CLIFailure("writing \(path) failed: \(failure)") }
    }

    private func submit(_ bytes: inout [UInt8], samples: Int64, endOfStream: Bool) {
        granule += samples
        bytes.withUnsafeMutableBufferPointer { buffer in
            var packet = ogg_packet()
            packet.packet = buffer.baseAddress
            packet.bytes = buffer.count
            packet.b_o_s = packetNumber == 0 ? 1 : 0
            packet.e_o_s = endOfStream ? 1 : 0
            packet.granulepos = granule
            packet.packetno = packetNumber
            _ = ogg_stream_packetin(&stream, &packet)
        }
        packetNumber += 1
        var page = ogg_page()
        while ogg_stream_pageout(&stream, &page) != 0 { writePage(page) }
    }

    private func flushPages() {
        var page = ogg_page()
        while ogg_stream_flush(&stream, &page) != 0 { writePage(page) }
    }

    private func writePage(_ page: ogg_page) {
        guard failure == nil else { return }
        let header = fwrite(page.header, 1, page.header_len, file)
        let body = fwrite(page.body, 1, page.body_len, file)
        if header != page.header_len || body != page.body_len {
            failure = String(cString: strerror(errno))
        }
        bytesWritten += header + body
    }

    private func littleEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
