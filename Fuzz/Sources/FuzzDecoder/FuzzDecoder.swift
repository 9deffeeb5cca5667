import DeskAudioC
import DeskAudioCTypes

/// Room for the longest decode (DESKAUDIO_DECODER_MAX_SAMPLES of stereo), allocated once.
nonisolated(unsafe) private let pcm = UnsafeMutablePointer<Float>.allocate(capacity: 2 * Int(DESKAUDIO_DECODER_MAX_SAMPLES))

/// libFuzzer entry: the bytes are a sequence of AudioFrames, each preceded by its length
/// (2 bytes, little-endian; the top bit asks for room for one frame only), fed to one new
/// decoder in order. Each call must return a code or a sample count that fits the room.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDecoder(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, let decoder = deskaudio_decoder_create() else { return 0 }
    defer { deskaudio_decoder_destroy(decoder) }
    var offset = 0
    while offset + 2 <= size {
        let word = Int(data[offset]) | Int(data[offset + 1]) << 8
        offset += 2
        let length = min(word & 0x7fff, size - offset)
        let room = word & 0x8000 != 0 ? 480 : Int(DESKAUDIO_DECODER_MAX_SAMPLES)
        let result = deskaudio_decoder_decode(decoder, data + offset, length, pcm, room)
        precondition(result <= room, "wrote \(result) samples into room for \(room)")
        precondition(result >= 0 || deskaudio_strerror(result) != nil, "unnamed status \(result)")
        offset += length
    }
    var stats = deskaudio_decoder_stats()
    precondition(deskaudio_decoder_get_stats(decoder, &stats, MemoryLayout<deskaudio_decoder_stats>.size) == 0)
    return 0
}
