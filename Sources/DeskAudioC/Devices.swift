import DeskAudio

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

/// NULL and "" mean the default device.
private func deviceName(_ name: UnsafePointer<CChar>?) -> String? {
    guard let name, name.pointee != 0 else { return nil }
    return String(cString: name)
}
