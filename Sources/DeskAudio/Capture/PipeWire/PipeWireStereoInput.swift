import CPipeWire
import DeskAudioShim

/// What every input stream of the library asks PipeWire for, 48 kHz F32 in a channel layout
/// (stereo FL FR unless asked otherwise) with the server converting, and how such a stream's
/// buffers are read. (The remote microphone's output stream offers stereo the same way.)
enum PipeWireStereoInput {
    /// Connects `stream` as an input (or `direction`) in that format with `layout`'s
    /// channels and positions, with `flags` (pw_stream_flags bits); returns
    /// pw_stream_connect's result.
    static func connect(
        _ stream: OpaquePointer, flags: UInt32, direction: spa_direction = SPA_DIRECTION_INPUT,
        layout: ChannelLayout = .stereo
    ) -> Int32 {
        var podBuffer = [UInt8](repeating: 0, count: 1024)
        return podBuffer.withUnsafeMutableBytes { bytes -> Int32 in
            var builder = spa_pod_builder()
            spa_pod_builder_init(&builder, bytes.baseAddress, UInt32(bytes.count))
            var info = spa_audio_info_raw()
            info.format = SPA_AUDIO_FORMAT_F32
            info.rate = UInt32(AudioFormat.sampleRate)
            info.channels = UInt32(layout.channels)
            withUnsafeMutableBytes(of: &info.position) { positions in
                for (index, position) in spaPositions(layout).enumerated() {
                    positions.storeBytes(of: position.rawValue, toByteOffset: 4 * index, as: UInt32.self)
                }
            }
            var params: [UnsafePointer<spa_pod>?] = [
                UnsafePointer(spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat.rawValue, &info))
            ]
            return pw_stream_connect(
                stream, direction, UInt32.max /* PW_ID_ANY */, pw_stream_flags(flags), &params, 1)
        }
    }

    /// SPA's channel positions for `layout`, in its order.
    static func spaPositions(_ layout: ChannelLayout) -> [spa_audio_channel] {
        let all = [
            SPA_AUDIO_CHANNEL_FL, SPA_AUDIO_CHANNEL_FR, SPA_AUDIO_CHANNEL_FC, SPA_AUDIO_CHANNEL_LFE,
            SPA_AUDIO_CHANNEL_RL, SPA_AUDIO_CHANNEL_RR, SPA_AUDIO_CHANNEL_SL, SPA_AUDIO_CHANNEL_SR,
        ]
        return layout == .mono ? [SPA_AUDIO_CHANNEL_MONO] : Array(all.prefix(layout.channels))
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
