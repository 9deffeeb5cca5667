import CPipeWire
import DeskAudioShim

/// What every input stream of the library asks PipeWire for, 48 kHz stereo F32 (FL, FR) with
/// the server converting, and how such a stream's buffers are read. (The remote microphone's
/// output stream offers the same format.)
enum PipeWireStereoInput {
    /// Connects `stream` as an input (or `direction`) in that format, with `flags`
    /// (pw_stream_flags bits); returns pw_stream_connect's result.
    static func connect(_ stream: OpaquePointer, flags: UInt32, direction: spa_direction = SPA_DIRECTION_INPUT) -> Int32 {
        var podBuffer = [UInt8](repeating: 0, count: 1024)
        return podBuffer.withUnsafeMutableBytes { bytes -> Int32 in
            var builder = spa_pod_builder()
            spa_pod_builder_init(&builder, bytes.baseAddress, UInt32(bytes.count))
            var info = spa_audio_info_raw()
            info.format = SPA_AUDIO_FORMAT_F32
            info.rate = UInt32(AudioFormat.sampleRate)
            info.channels = UInt32(AudioFormat.channels)
            withUnsafeMutableBytes(of: &info.position) { positions in
                positions.storeBytes(of: SPA_AUDIO_CHANNEL_FL.rawValue, toByteOffset: 0, as: UInt32.self)
                positions.storeBytes(of: SPA_AUDIO_CHANNEL_FR.rawValue, toByteOffset: 4, as: UInt32.self)
            }
            var params: [UnsafePointer<spa_pod>?] = [
                UnsafePointer(spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat.rawValue, &info))
            ]
            return pw_stream_connect(
                stream, direction, UInt32.max /* PW_ID_ANY */, pw_stream_flags(flags), &params, 1)
        }
    }

    /// Data thread: hands the interleaved samples of the next buffer `stream` holds to `body`
    /// and gives the buffer back; false when there was none. Allocates nothing.
    @discardableResult
    static func read(_ stream: OpaquePointer, _ body: (UnsafeBufferPointer<Float>) -> Void) -> Bool {
        guard let buffer = pw_stream_dequeue_buffer(stream) else { return false }
        defer { pw_stream_queue_buffer(stream, buffer) }
        guard let spaBuffer = buffer.pointee.buffer, spaBuffer.pointee.n_datas > 0,
            let data = spaBuffer.pointee.datas, let base = data.pointee.data,
            let chunk = data.pointee.chunk
        else { return true }
        let maxSize = data.pointee.maxsize
        let offset = min(chunk.pointee.offset, maxSize)
        let size = min(chunk.pointee.size, maxSize - offset)
        body(
            UnsafeBufferPointer(
                start: (base + Int(offset)).assumingMemoryBound(to: Float.self),
                count: Int(size) / MemoryLayout<Float>.size))
        return true
    }
}
