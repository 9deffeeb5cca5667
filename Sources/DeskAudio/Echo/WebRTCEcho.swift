import DeskAudioShim

/// WebRTC's AEC3 as PipeWire's echo-cancel plugin has it, loaded at run time
/// (deskaudio_webrtc_echo_shim.h): mono, 48 kHz, 10 ms blocks.
enum WebRTCEcho {
    /// Why AEC3 cannot run here (no plugin, or one built on webrtc-audio-processing 0.x);
    /// nil where it can. Found once, by making a canceller.
    static let unavailableReason: String? = {
        do throws(DeskAudioError) {
            deskaudio_webrtc_echo_destroy(try make())
            return nil
        } catch {
            return error.message
        }
    }()

    /// A canceller; throws `.notSupported` with the reason where AEC3 cannot run.
    static func make() throws(DeskAudioError) -> OpaquePointer {
        var why = [CChar](repeating: 0, count: 1024)
        guard let echo = deskaudio_webrtc_echo_create(UInt32(AudioFormat.sampleRate), &why, why.count) else {
            throw .notSupported(String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return echo
    }
}
