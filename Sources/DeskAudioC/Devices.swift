import Glibc
import DeskAudio

//# 4. Devices and apps: what the server has, which device or applications to record, the doctor

/// Kinds of capture device, as deskaudio_list_devices() reports them.
public enum deskaudio_device_kind: Int32, CaseIterable {
    /// An output (sink): capturing it records what is played to it, as app audio.
    case DESKAUDIO_DEVICE_SINK = 1
    /// An input (source) that is not a monitor: a microphone.
    case DESKAUDIO_DEVICE_SOURCE = 2
}

/// Called by deskaudio_list_devices() once per device: `kind` is a deskaudio_device_kind,
/// `name` the stable name that deskaudio_set_app_device() and deskaudio_set_mic_device()
/// take, `description` a name for people, `is_default` true for the server's default sink
/// or default source. The strings are valid only during the call.
public typealias deskaudio_device_callback =
    @convention(c) (
        _ kind: Int32, _ name: UnsafePointer<CChar>?, _ description: UnsafePointer<CChar>?, _ is_default: Bool,
        _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// Lists the capture devices of the audio server the backend choice picks (the one in use
/// while capturing): every sink, whose monitor is app audio, and every source that is not
/// a monitor. Calls `callback` once per device, on the calling thread, before it returns.
/// Returns the number of devices, or a negative deskaudio_status. Blocks up to 3 s for the
/// server.
/// - Parameters:
///   - callback: called once per device, on the calling thread (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the number of devices, or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_list_devices")
public func deskaudio_list_devices(
    _ callback: deskaudio_device_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    guard let callback else { return invalidArgument("device callback is NULL") }
    return valueOrStatus { () throws(DeskAudioError) in
        let devices = try defaultCapture.devices()
        for device in devices {
            callback(device.kind.rawValue, device.name, device.description, device.isDefault, user_data)
        }
        return Int32(clamping: devices.count)
    }
}

/// Makes `capture` record app audio from the monitor of the sink `name` (a name
/// deskaudio_list_devices() gives) instead of the default sink; NULL or "" goes back to the
/// default sink, which is followed when it changes (a named sink is not). The name is
/// checked against the server now: an unknown one, or a source's, gives
/// DESKAUDIO_ERROR_NO_DEVICE. While app audio is captured, capture moves to the sink at
/// once; if that fails, app capture stops and the error says why. Not callable from inside
/// the capture's frame callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - name: a sink's name (deskaudio_list_devices()); NULL: the default sink, followed when it changes.
/// - Returns: DESKAUDIO_OK, DESKAUDIO_ERROR_NO_DEVICE for an unknown sink, or another negative deskaudio_status.
@_cdecl("deskaudio_capture_set_app_device")
public func deskaudio_capture_set_app_device(_ capture: deskaudio_capture?, _ name: UnsafePointer<CChar>?) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.setDevice(deviceName(name), forMic: false) }
    }
}

/// deskaudio_capture_set_app_device() on the default capture.
@_cdecl("deskaudio_set_app_device")
public func deskaudio_set_app_device(_ name: UnsafePointer<CChar>?) -> Int32 {
    deskaudio_capture_set_app_device(defaultHandle, name)
}

/// Makes `capture` record the microphone from the source `name` (a name
/// deskaudio_list_devices() gives) instead of the default source; NULL or "" goes back to
/// the default source, followed when it changes. Checked against the server now: an unknown
/// name, a sink's or a monitor's gives DESKAUDIO_ERROR_NO_DEVICE. While the microphone is
/// captured, capture moves to the source at once. Not callable from inside the capture's
/// frame callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - name: a source's name (deskaudio_list_devices()); NULL: the default source.
/// - Returns: DESKAUDIO_OK, DESKAUDIO_ERROR_NO_DEVICE for an unknown source, or another negative deskaudio_status.
@_cdecl("deskaudio_capture_set_mic_device")
public func deskaudio_capture_set_mic_device(_ capture: deskaudio_capture?, _ name: UnsafePointer<CChar>?) -> Int32 {
    withCapture(capture) { service in
        status { () throws(DeskAudioError) in try service.setDevice(deviceName(name), forMic: true) }
    }
}

/// deskaudio_capture_set_mic_device() on the default capture.
@_cdecl("deskaudio_set_mic_device")
public func deskaudio_set_mic_device(_ name: UnsafePointer<CChar>?) -> Int32 {
    deskaudio_capture_set_mic_device(defaultHandle, name)
}

/// What app audio records, for deskaudio_capture_set_apps().
public enum deskaudio_apps_mode: Int32, CaseIterable {
    /// Everything the default sink (or the sink deskaudio_capture_set_app_device() chose)
    /// plays, through its monitor: the default.
    case DESKAUDIO_APPS_ALL = 0
    /// Only what the applications named play, wherever they play to.
    case DESKAUDIO_APPS_ONLY = 1
    /// What every application but those named plays.
    case DESKAUDIO_APPS_ALL_EXCEPT = 2
}

/// The most names deskaudio_capture_set_apps() takes.
public let DESKAUDIO_MAX_APP_NAMES: Int32 = 64

/// Called by deskaudio_list_apps() once per stream an application plays: its
/// `application_name` and process `binary` ("" if unknown), its process id `pid` (0 if
/// unknown), the server's `stream_id` (a PipeWire node id, a PulseAudio sink input index),
/// and whether sound is flowing (`running`). The strings are valid only during the call.
public typealias deskaudio_app_callback =
    @convention(c) (
        _ application_name: UnsafePointer<CChar>?, _ binary: UnsafePointer<CChar>?, _ pid: Int32,
        _ stream_id: UInt32, _ running: Bool, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// Lists the streams applications play now on the audio server the backend choice picks:
/// what deskaudio_capture_set_apps() matches names against. Calls `callback` once per stream,
/// on the calling thread, before it returns. Returns the number of streams, or a negative
/// deskaudio_status. Blocks up to 3 s for the server.
/// - Parameters:
///   - callback: called once per stream, on the calling thread (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the number of streams, or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_list_apps")
public func deskaudio_list_apps(_ callback: deskaudio_app_callback?, _ user_data: UnsafeMutableRawPointer?) -> Int32 {
    guard let callback else { return invalidArgument("app callback is NULL") }
    return valueOrStatus { () throws(DeskAudioError) in
        let streams = try defaultCapture.playbackStreams()
        for stream in streams {
            callback(stream.applicationName, stream.binary, stream.processID, stream.id, stream.isRunning, user_data)
        }
        return Int32(clamping: streams.count)
    }
}

/// Chooses what `capture`'s app audio records: DESKAUDIO_APPS_ALL (the default sink's monitor,
/// `names` ignored), or DESKAUDIO_APPS_ONLY / DESKAUDIO_APPS_ALL_EXCEPT the `count` applications
/// in `names`, each matched, ignoring case, against a stream's application name, process
/// binary or node name, or as a process id (deskaudio_list_apps() shows them). Applications
/// that start or stop while capturing are picked up or dropped at once
/// (DESKAUDIO_EVENT_APP_STARTED/STOPPED say which). The machine's speakers keep playing them
/// unless deskaudio_capture_set_mute_host() says otherwise.
/// The calling process's own playback is left out unless `include_own_process` is true, so a
/// host that plays its viewer's voice never sends it back. App audio that is capturing
/// switches at once. Through the PulseAudio API (a PulseAudio daemon or pipewire-pulse) each
/// chosen stream is recorded where it plays, one record stream per stream mixed by the
/// library, at most 15 at once (more are left out, with a warning in the log).
/// DESKAUDIO_ERROR_INVALID_ARGUMENT for an unknown mode, ONLY with no name, NULL names with
/// count > 0, a NULL or empty name, or more than DESKAUDIO_MAX_APP_NAMES. Not callable from
/// inside the capture's frame callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - mode: a deskaudio_apps_mode.
///   - names: `count` application names (or pids as text), each 1–255 bytes; the caller's, read during the call only.
///   - count: how many names, 0 to DESKAUDIO_MAX_APP_NAMES (at least 1 for DESKAUDIO_APPS_ONLY).
///   - include_own_process: true to record the calling process's own playback too.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_capture_set_apps")
public func deskaudio_capture_set_apps(
    _ capture: deskaudio_capture?, _ mode: Int32, _ names: UnsafePointer<UnsafePointer<CChar>?>?, _ count: size_t,
    _ include_own_process: Bool
) -> Int32 {
    withCapture(capture) { service in
        guard let chosen = deskaudio_apps_mode(rawValue: mode) else {
            return invalidArgument("mode \(mode) is not a deskaudio_apps_mode")
        }
        guard count <= Int(DESKAUDIO_MAX_APP_NAMES) else {
            return invalidArgument("\(count) names: at most \(DESKAUDIO_MAX_APP_NAMES)")
        }
        guard names != nil || count == 0 else { return invalidArgument("names is NULL") }
        var texts: [String] = []
        for index in 0..<(chosen == .DESKAUDIO_APPS_ALL ? 0 : count) {
            guard let name = names?[index], name.pointee != 0 else {
                return invalidArgument("name \(index) is NULL or empty")
            }
            texts.append(String(cString: name))
        }
        let selection: AppSelection?
        switch chosen {
        case .DESKAUDIO_APPS_ALL: selection = nil
        case .DESKAUDIO_APPS_ONLY:
            guard !texts.isEmpty else { return invalidArgument("DESKAUDIO_APPS_ONLY needs at least one name") }
            selection = AppSelection(mode: .only, names: texts, includesOwnProcess: include_own_process)
        case .DESKAUDIO_APPS_ALL_EXCEPT:
            selection = AppSelection(mode: .allExcept, names: texts, includesOwnProcess: include_own_process)
        }
        return status { () throws(DeskAudioError) in try service.setApps(selection) }
    }
}

/// deskaudio_capture_set_apps() on the default capture.
@_cdecl("deskaudio_set_apps")
public func deskaudio_set_apps(
    _ mode: Int32, _ names: UnsafePointer<UnsafePointer<CChar>?>?, _ count: size_t, _ include_own_process: Bool
) -> Int32 {
    deskaudio_capture_set_apps(defaultHandle, mode, names, count, include_own_process)
}

/// While `mute` is true, what `capture`'s app audio records reaches the viewer but not the
/// machine's speakers: the recorded streams play into a silent sink of the library's
/// ("deskaudio-mute-…", left out of device lists) and the default sink is never changed.
/// With DESKAUDIO_APPS_ALL, app audio then records every application but the calling
/// process, wherever it plays, instead of the default sink's monitor. Every stream is back on
/// the device it played to when `mute` goes false, when capture stops, and (PipeWire removes
/// what a client made when it goes) within a second of the process's death, even by SIGKILL;
/// a stream the user moved by hand comes back to the default device then, and to the device
/// it had at the next mute on that server. Through the PulseAudio API (a PulseAudio daemon
/// or pipewire-pulse) the sink is a loaded module-null-sink, which outlives a killed process:
/// its streams stay silent until the next capture of any kind starts on that server, which
/// unloads it (the server then moves them to the default sink). A stream moved elsewhere
/// while muted stays there. App audio that is capturing switches at once. Not callable from
/// inside the capture's frame callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - mute: true to keep what app audio records off this machine's speakers.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_capture_set_mute_host")
public func deskaudio_capture_set_mute_host(_ capture: deskaudio_capture?, _ mute: Bool) -> Int32 {
    withCapture(capture) { service in status { () throws(DeskAudioError) in try service.setMuteHost(mute) } }
}

/// deskaudio_capture_set_mute_host() on the default capture.
@_cdecl("deskaudio_set_mute_host")
public func deskaudio_set_mute_host(_ mute: Bool) -> Int32 {
    deskaudio_capture_set_mute_host(defaultHandle, mute)
}

/// While `ensure` is true (false by default), app audio on a server with no sink at all (a
/// machine with no sound card, a headless server) creates a virtual sink for as long as it
/// captures, so applications have somewhere to play and the viewer hears them; an event
/// (DESKAUDIO_EVENT_DEVICE_CHANGED, "app audio: NAME.monitor") names it. On PipeWire it is
/// a node of the library's connection (deskaudio-virtual-PID-N), gone when capture stops or
/// the process ends however it ends. Through the PulseAudio API it is a loaded
/// module-null-sink (deskaudio_virtual_PID_N), unloaded when capture stops; a killed
/// process leaves it loaded until the next capture start on that server unloads it. What
/// played there moves to whatever sink the server picks. Applies from the next start of app
/// audio. Returns DESKAUDIO_OK.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - ensure: true to make a virtual sink on a server with none, while app audio captures.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL capture.
@_cdecl("deskaudio_capture_set_ensure_sink")
public func deskaudio_capture_set_ensure_sink(_ capture: deskaudio_capture?, _ ensure: Bool) -> Int32 {
    withCapture(capture) { service in
        service.setEnsuresSink(ensure)
        return 0
    }
}

/// deskaudio_capture_set_ensure_sink() on the default capture.
@_cdecl("deskaudio_set_ensure_sink")
public func deskaudio_set_ensure_sink(_ ensure: Bool) -> Int32 {
    deskaudio_capture_set_ensure_sink(defaultHandle, ensure)
}

/// NULL and "" mean the default device.
private func deviceName(_ name: UnsafePointer<CChar>?) -> String? {
    guard let name, name.pointee != 0 else { return nil }
    return String(cString: name)
}
