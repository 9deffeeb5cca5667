import DeskAudio
import DeskAudioCTypes

/// The backend in deskaudio_stats.backend.
public enum deskaudio_backend_kind: Int32, CaseIterable {
    /// Capture is stopped.
    case DESKAUDIO_BACKEND_NONE = 0
    /// PipeWire's native API.
    case DESKAUDIO_BACKEND_PIPEWIRE = 1
    /// PulseAudio's API (a PulseAudio daemon or pipewire-pulse).
    case DESKAUDIO_BACKEND_PULSE = 2
}

/// Fills `*stats` with `capture`'s counts, levels and latencies so far. Takes no lock the
/// worker holds: may be called from any thread, the frame callback included, as often as
/// wanted. Returns DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for NULL.
@_cdecl("deskaudio_capture_get_stats")
public func deskaudio_capture_get_stats(
    _ capture: deskaudio_capture?, _ stats: UnsafeMutablePointer<deskaudio_stats>?
) -> Int32 {
    withCapture(capture) { service in
        guard let stats else { return invalidArgument("stats is NULL") }
        let snapshot = service.stats()
        let silence = LevelMeter.dBFS(0)
        stats.pointee = deskaudio_stats(
            frames_captured: snapshot.framesCaptured, frames_sent: snapshot.framesSent,
            frames_gated: snapshot.framesGated, frames_dropped_overflow: snapshot.framesDroppedOverflow,
            frames_dropped_late: snapshot.framesDroppedLate,
            frames_dropped_encoder: snapshot.framesDroppedEncoder,
            frames_silence_filled: snapshot.framesSilenceFilled, bytes_sent: snapshot.bytesSent,
            callback_latency_mean_ns: snapshot.callbackLatencyMeanNs,
            callback_latency_max_ns: snapshot.callbackLatencyMaxNs,
            app_server_latency_ns: snapshot.app?.serverLatencyNs ?? -1,
            mic_server_latency_ns: snapshot.mic?.serverLatencyNs ?? -1,
            bitrate: snapshot.bitrate, backend: backendKind(snapshot.backend).rawValue,
            app_peak_dbfs: snapshot.app?.peakDBFS ?? silence, app_rms_dbfs: snapshot.app?.rmsDBFS ?? silence,
            mic_peak_dbfs: snapshot.mic?.peakDBFS ?? silence, mic_rms_dbfs: snapshot.mic?.rmsDBFS ?? silence,
            frames_dropped_slow_callback: snapshot.framesDroppedSlowCallback)
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
}

/// deskaudio_capture_get_stats() of the default capture.
@_cdecl("deskaudio_get_stats")
public func deskaudio_get_stats(_ stats: UnsafeMutablePointer<deskaudio_stats>?) -> Int32 {
    deskaudio_capture_get_stats(defaultHandle, stats)
}

private func backendKind(_ backend: AudioBackend?) -> deskaudio_backend_kind {
    switch backend {
    case .pipewire: .DESKAUDIO_BACKEND_PIPEWIRE
    case .pulse: .DESKAUDIO_BACKEND_PULSE
    case nil: .DESKAUDIO_BACKEND_NONE
    }
}
