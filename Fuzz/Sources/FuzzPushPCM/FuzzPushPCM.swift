import DeskAudioC
import DeskAudioCTypes
import Glibc

/// Rates to pick from: each edge of the accepted range, common rates, and nonsense.
private let rates: [Int32] = [0, -1, 7_999, 8_000, 11_025, 16_000, 22_050, 44_100, 48_000, 96_000, 96_001, .max]

/// Every frame the pushed audio becomes must parse (runs on the library's delivery thread).
private let checkFrame: deskaudio_frame_callback = { frame, length, _ in
    var info = deskaudio_frame_info()
    precondition(deskaudio_parse_frame(frame, length, &info, MemoryLayout<deskaudio_frame_info>.size) == 0, "the library sent a frame it cannot parse")
}

nonisolated(unsafe) private var callbackSet = false

/// libFuzzer entry: byte 0 picks the format (incl. invalid ones) and whether to pass NULL or
/// stop capture afterwards, byte 1 the channel count (0–3), byte 2 the rate; the rest is PCM
/// of any length. push_pcm must take whole frames or refuse with a named code, never crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPushPCM(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    if !callbackSet {
        set_audio_callback(checkFrame, nil)
        // Exit as a host would: capture stopped, its worker joined. libFuzzer exits right
        // after the last input, and a worker that input had just started still held its
        // start-up closure (32 bytes) in flight, which LeakSanitizer's exit check reported
        // as a leak (CI of a74c6a4).
        atexit { _ = enable_audio(false, false) }
        callbackSet = true
    }
    guard let data, size >= 3 else { return 0 }
    let format = Int32(data[0] & 0x03)
    let passNull = data[0] & 0x04 != 0
    let stopAfter = data[0] & 0x08 != 0
    let channels = Int32(data[1] & 0x03)
    let rate = rates[Int(data[2]) % rates.count]
    let bytes = size - 3
    let result = deskaudio_push_pcm(passNull ? nil : UnsafeRawPointer(data + 3), bytes, format, channels, rate)
    if result >= 0 {
        precondition(!passNull || bytes == 0, "NULL data taken")
        let frameBytes = Int(channels) * (format == 1 ? 2 : 4)
        precondition(frameBytes > 0 && Int(result) * frameBytes <= bytes, "took \(result) frames of \(bytes) bytes")
    } else {
        precondition(deskaudio_strerror(result) != nil, "unnamed status \(result)")
    }
    if stopAfter { _ = enable_audio(false, false) }
    return 0
}
