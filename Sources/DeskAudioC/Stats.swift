import DeskAudio
import DeskAudioCTypes
import Glibc

//# 2. Capture: captures, their sources and frames, their stats

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
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - stats: where the counts go (not NULL).
///   - stats_size: `sizeof(deskaudio_stats)`: fields appended in later versions are not
///     written past it (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT (NULL, or a size of 0).
@_cdecl("deskaudio_capture_get_stats")
public func deskaudio_capture_get_stats(
    _ capture: deskaudio_capture?, _ stats: UnsafeMutablePointer<deskaudio_stats>?, _ stats_size: size_t
) -> Int32 {
    withCapture(capture) { service in
        copyOut(to: stats, size: stats_size, what: "stats") { statsOf(service) }
    }
}

/// deskaudio_capture_get_stats() of the default capture.
@_cdecl("deskaudio_get_stats")
public func deskaudio_get_stats(_ stats: UnsafeMutablePointer<deskaudio_stats>?, _ stats_size: size_t) -> Int32 {
    deskaudio_capture_get_stats(defaultHandle, stats, stats_size)
}

private func statsOf(_ service: AudioService) -> deskaudio_stats {
        let snapshot = service.stats()
        let silence = LevelMeter.dBFS(0)
        return deskaudio_stats(
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
            frames_dropped_slow_callback: snapshot.framesDroppedSlowCallback,
            frames_skipped_by_server: snapshot.framesSkippedByServer, server_zero_cycles: snapshot.serverZeroCycles)
}

/// Fills `*clock` with where `capture`'s sample clock stands on CLOCK_MONOTONIC after its
/// last chunk of audio: the AudioFrames' sample_clock mapped to the time its sample sounded,
/// by the audio server's clock (docs/capture.md, "Capture times"). A host places any sample,
/// and so any frame, on its video timeline with it. Any thread, as often as wanted.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - clock: where the mapping goes (not NULL).
///   - clock_size: `sizeof(deskaudio_clock)` (docs/hosting.md, "Versions").
/// - Returns: DESKAUDIO_OK; DESKAUDIO_ERROR_STREAM when no audio has been framed yet (nothing
///   captured or pushed since the capture was created); DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_capture_get_clock")
public func deskaudio_capture_get_clock(
    _ capture: deskaudio_capture?, _ clock: UnsafeMutablePointer<deskaudio_clock>?, _ clock_size: size_t
) -> Int32 {
    withCapture(capture) { service in
        copyOut(to: clock, size: clock_size, what: "clock") { () throws(DeskAudioError) in
            guard let mapping = service.clock() else {
                throw .streamFailed("no audio has been framed yet: the clock starts with the first chunk")
            }
            let source: UInt32
            switch mapping.origin {
            case .serverClock(let flags): source = UInt32(flags.rawValue)
            case .arrival: source = 0
            }
            return deskaudio_clock(
                sample_clock: mapping.sampleClock, time_ns: mapping.timeNs,
                nanoseconds_per_sample: mapping.nanosecondsPerSample, rate_error_ppm: mapping.rateErrorPPM,
                jitter_ns: mapping.jitterNs, relocks: UInt32(clamping: mapping.relocks), source: source)
        }
    }
}

/// deskaudio_capture_get_clock() of the default capture.
@_cdecl("deskaudio_get_clock")
public func deskaudio_get_clock(_ clock: UnsafeMutablePointer<deskaudio_clock>?, _ clock_size: size_t) -> Int32 {
    deskaudio_capture_get_clock(defaultHandle, clock, clock_size)
}

private func backendKind(_ backend: AudioBackend?) -> deskaudio_backend_kind {
    switch backend {
    case .pipewire: .DESKAUDIO_BACKEND_PIPEWIRE
    case .pulse: .DESKAUDIO_BACKEND_PULSE
    case nil: .DESKAUDIO_BACKEND_NONE
    }
}

/// Called by deskaudio_capture_get_app_levels() once per application stream that app audio
/// records: its `application_name` ("" if unknown), process id `pid` (0 if unknown), the
/// server's `stream_id` (a PipeWire node id, a PulseAudio sink input index), and its peak and
/// RMS over the last second in dBFS (a full-scale sine peaks at 0 with an RMS of -3; -120
/// for silence). The name is valid only during the call.
public typealias deskaudio_app_level_callback =
    @convention(c) (
        _ application_name: UnsafePointer<CChar>?, _ pid: Int32, _ stream_id: UInt32, _ peak_dbfs: Float,
        _ rms_dbfs: Float, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// While `measure` is true (false by default), `capture`'s app audio, when it records chosen
/// applications (deskaudio_capture_set_apps() with DESKAUDIO_APPS_ONLY or
/// DESKAUDIO_APPS_ALL_EXCEPT, or the host muted), measures each recorded stream's level on its
/// own, for deskaudio_capture_get_app_levels(). On PipeWire's native backend that is one more
/// stream per recorded application (passive: it keeps nothing running); through the
/// PulseAudio API each stream is recorded on its own anyway. A whole-sink capture
/// (DESKAUDIO_APPS_ALL) has no levels per application. App audio that is capturing switches
/// at once. Returns DESKAUDIO_OK or an error. Not callable from inside the capture's frame
/// callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - measure: true to measure each recorded application's level.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_capture_set_app_levels")
public func deskaudio_capture_set_app_levels(_ capture: deskaudio_capture?, _ measure: Bool) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.setMeasuresAppLevels(measure) }
    }
}

/// deskaudio_capture_set_app_levels() on the default capture.
@_cdecl("deskaudio_set_app_levels")
public func deskaudio_set_app_levels(_ measure: Bool) -> Int32 {
    deskaudio_capture_set_app_levels(defaultHandle, measure)
}

/// Calls `callback` once per application stream `capture`'s app audio records now, with its
/// level over the last second, on the calling thread, before it returns; streams in order of
/// `stream_id`. Returns the number of streams (none unless deskaudio_capture_set_app_levels()
/// is on and app audio records chosen applications), or DESKAUDIO_ERROR_INVALID_ARGUMENT for
/// a NULL callback. Takes no lock an audio thread takes: may be called from any thread, the
/// frame callback included.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - callback: called once per stream, on the calling thread (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the number of streams, or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_capture_get_app_levels")
public func deskaudio_capture_get_app_levels(
    _ capture: deskaudio_capture?, _ callback: deskaudio_app_level_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    withCapture(capture) { service in
        guard let callback else { return invalidArgument("app level callback is NULL") }
        let levels = service.appLevels()
        for level in levels {
            callback(
                level.stream.applicationName, level.stream.processID, level.stream.id, level.peakDBFS, level.rmsDBFS,
                user_data)
        }
        return Int32(clamping: levels.count)
    }
}

/// deskaudio_capture_get_app_levels() on the default capture.
@_cdecl("deskaudio_get_app_levels")
public func deskaudio_get_app_levels(
    _ callback: deskaudio_app_level_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    deskaudio_capture_get_app_levels(defaultHandle, callback, user_data)
}
