import DeskAudioC
import DeskAudioCTypes

/// libFuzzer entry: any bytes as an AudioFrame. The parser must return a code, never
/// crash, read nothing outside the bytes, and on success describe a frame that fits them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var info = deskaudio_frame_info()
    let status = deskaudio_parse_frame(data, size, &info, MemoryLayout<deskaudio_frame_info>.size)
    if status == deskaudio_status.DESKAUDIO_OK.rawValue {
        // Version 1's header is 36 bytes; version 2's (surround) 38 plus one per channel.
        let header = info.version == 2 ? 38 + Int(info.channels) : 36
        precondition(info.version == 1 || info.version == 2, "version \(info.version)")
        precondition(info.payload_length > 0 && header + Int(info.payload_length) == size, "payload outside the bytes")
        precondition(info.payload == data.map { $0 + header }, "payload does not follow the header")
    } else {
        precondition(status < 0 && deskaudio_strerror(status) != nil, "unnamed status \(status)")
    }
    return 0
}
