import DeskAudioC
import DeskAudioCTypes

/// Room for the largest packet, allocated once; a guard byte past the room the call is told of.
nonisolated(unsafe) private let packet = UnsafeMutablePointer<UInt8>.allocate(capacity: Int(DESKAUDIO_RTP_MAX_PACKET) + 1)
nonisolated(unsafe) private let sdp = UnsafeMutablePointer<CChar>.allocate(capacity: Int(DESKAUDIO_RTP_MAX_SDP))

/// libFuzzer entry: the first byte sets the packetizer up (bit 0: abs-capture-time on; bits
/// 1-2: a declared format, none, stereo, 5.1 or 7.1), the rest is a sequence of AudioFrames,
/// each preceded by its length (2 bytes, little-endian; the top bit gives room for only 40
/// bytes of packet), fed to one new packetizer in order. Each call must return a code or a
/// length within the room, write nothing past it, and the SDP must always be writable.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRTPPacketizer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size >= 1, let packetizer = deskaudio_rtp_packetizer_create(111, 7) else { return 0 }
    defer { deskaudio_rtp_packetizer_destroy(packetizer) }
    let setup = data[0]
    if setup & 1 != 0 { precondition(deskaudio_rtp_packetizer_set_abs_capture_time(packetizer, 3) == 0) }
    let declared: Int32 = [0, 2, 6, 8][Int(setup >> 1 & 3)]
    if declared != 0 { precondition(deskaudio_rtp_packetizer_set_format(packetizer, declared, 480) == 0) }
    var offset = 1
    while offset + 2 <= size {
        let word = Int(data[offset]) | Int(data[offset + 1]) << 8
        offset += 2
        let length = min(word & 0x7fff, size - offset)
        let room = word & 0x8000 != 0 ? 40 : Int(DESKAUDIO_RTP_MAX_PACKET)
        packet[room] = 0xA5
        let result = deskaudio_rtp_packetize(packetizer, data + offset, length, packet, room)
        precondition(result <= room, "wrote \(result) bytes into room for \(room)")
        precondition(packet[room] == 0xA5, "wrote past the room")
        precondition(result >= 12 || (result < 0 && deskaudio_strerror(result) != nil), "result \(result)")
        if result >= 12 { precondition(packet[0] >> 6 == 2 && packet[1] & 0x7F == 111, "not an RTP header") }
        offset += length
    }
    let written = deskaudio_rtp_sdp(packetizer, "192.0.2.1", 5004, sdp, Int(DESKAUDIO_RTP_MAX_SDP))
    precondition(written > 0 && written < DESKAUDIO_RTP_MAX_SDP, "SDP: \(written)")
    return 0
}
