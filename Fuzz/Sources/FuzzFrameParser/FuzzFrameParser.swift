import DeskAudioC
import DeskAudioCTypes

/// libFuzzer entry: any bytes as an AudioFrame. The parser must return a code, never
/// crash, read nothing outside the bytes, and on success describe a frame that fits them.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrameParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    var info = deskaudio_frame_info()
    let status = deskaudio_parse_frame(data, size, &info)
    if status == deskaudio_status.DESKAUDIO_OK.rawValue {
        precondition(info.payload_length > 0 && 36 + Int(info.payload_length) <= size, "payload outside the bytes")
        precondition(info.payload == data.map { $0 + 36 }, "payload does not follow the header")
    } else {
        precondition(status < 0 && deskaudio_strerror(status) != nil, "unnamed status \(status)")
    }
    return 0
}
