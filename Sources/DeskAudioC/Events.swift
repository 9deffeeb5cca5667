import DeskAudio

//# 5. Events and logs: what happens to a capture, and the library's log

/// What happened, in a deskaudio_event_callback.
public enum deskaudio_event: Int32, CaseIterable {
    /// A source started capturing, or came back after its server went away.
    case DESKAUDIO_EVENT_CONNECTED = 1
    /// A source's stream was lost (its audio server stopped or dropped it); the library
    /// keeps trying to reopen it.
    case DESKAUDIO_EVENT_DISCONNECTED = 2
    /// A source now captures another device: the host chose one, or (PulseAudio API) the
    /// default it follows changed.
    case DESKAUDIO_EVENT_DEVICE_CHANGED = 3
    /// Something failed that no call returned to the host.
    case DESKAUDIO_EVENT_ERROR = 4
    /// While applications are selected (deskaudio_capture_set_apps()): a playback stream
    /// started; the detail names it ("NAME (pid P, stream ID): recorded" or "not recorded").
    case DESKAUDIO_EVENT_APP_STARTED = 5
    /// While applications are selected: a playback stream stopped; the detail as above.
    case DESKAUDIO_EVENT_APP_STOPPED = 6
    /// A source's stream is connected but has had no audio for 2 s (1 s once reopened): the
    /// session manager restarted and did not link it again, or someone unlinked it. The
    /// library reopens it (DESKAUDIO_EVENT_CONNECTED follows); frames carry on after a gap.
    case DESKAUDIO_EVENT_STALLED = 7
}

/// How much a log message matters.
public enum deskaudio_log_level: Int32, CaseIterable {
    /// A failure.
    case DESKAUDIO_LOG_ERROR = 1
    /// Something went wrong and was handled.
    case DESKAUDIO_LOG_WARNING = 2
    /// State changes: streams opened and closed, devices, backend.
    case DESKAUDIO_LOG_INFO = 3
    /// Detail for tracking a problem down.
    case DESKAUDIO_LOG_DEBUG = 4
}

/// Called with a deskaudio_event and a one-line English detail ("app audio: …"), valid
/// only during the call. Runs on a thread of the library's own (never an audio server's,
/// never inside a library lock), one call at a time.
public typealias deskaudio_event_callback =
    @convention(c) (
        _ event: Int32, _ detail: UnsafePointer<CChar>?, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// Called with a deskaudio_log_level and a message without a trailing newline, valid only
/// during the call; same thread rules as deskaudio_event_callback.
public typealias deskaudio_log_callback =
    @convention(c) (
        _ level: Int32, _ message: UnsafePointer<CChar>?, _ user_data: UnsafeMutableRawPointer?
    ) -> Void

/// Sets the function that receives `capture`'s state events, with `user_data` passed back;
/// NULL unregisters. Once this returns, the previous callback is never called again (from
/// inside a callback, the change applies from the next event). Events wait in a queue of
/// 256; beyond that they are dropped. DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a
/// NULL capture.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - callback: called with each event; NULL unregisters.
///   - user_data: passed back to `callback` untouched.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for a NULL capture.
@_cdecl("deskaudio_capture_set_event_callback")
public func deskaudio_capture_set_event_callback(
    _ capture: deskaudio_capture?, _ callback: deskaudio_event_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    withCapture(capture) { service in
        guard let callback else {
            service.notices.setEventHandler(nil)
            return deskaudio_status.DESKAUDIO_OK.rawValue
        }
        let userData = HostPointer(user_data)
        service.notices.setEventHandler { event, detail in
            detail.withCString { callback(event.rawValue, $0, userData.pointer) }
        }
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
}

/// deskaudio_capture_set_event_callback() on the default capture.
@_cdecl("deskaudio_set_event_callback")
public func deskaudio_set_event_callback(
    _ callback: deskaudio_event_callback?, _ user_data: UnsafeMutableRawPointer?
) {
    _ = deskaudio_capture_set_event_callback(defaultHandle, callback, user_data)
}

/// Sets the function that receives `capture`'s log messages up to `max_level` (a
/// deskaudio_log_level; DESKAUDIO_LOG_INFO is a good default), with `user_data` passed back;
/// NULL unregisters. Without one the library logs nothing, and it never writes to stdout or
/// stderr itself. Returns DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT for an unknown
/// level or a NULL capture.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - callback: called with each message; NULL unregisters.
///   - max_level: the most detailed deskaudio_log_level passed on.
///   - user_data: passed back to `callback` untouched.
/// - Returns: DESKAUDIO_OK, or DESKAUDIO_ERROR_INVALID_ARGUMENT.
@_cdecl("deskaudio_capture_set_log_callback")
public func deskaudio_capture_set_log_callback(
    _ capture: deskaudio_capture?, _ callback: deskaudio_log_callback?, _ max_level: Int32,
    _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    withCapture(capture) { service in
        guard let callback else {
            service.notices.setLogHandler(nil, level: .error)
            return deskaudio_status.DESKAUDIO_OK.rawValue
        }
        guard let level = LogLevel(rawValue: max_level) else {
            return invalidArgument("log level \(max_level) is not a deskaudio_log_level (1...4)")
        }
        let userData = HostPointer(user_data)
        service.notices.setLogHandler(
            { level, message in message.withCString { callback(level.rawValue, $0, userData.pointer) } },
            level: level)
        return deskaudio_status.DESKAUDIO_OK.rawValue
    }
}

/// deskaudio_capture_set_log_callback() on the default capture.
@_cdecl("deskaudio_set_log_callback")
public func deskaudio_set_log_callback(
    _ callback: deskaudio_log_callback?, _ max_level: Int32, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    deskaudio_capture_set_log_callback(defaultHandle, callback, max_level, user_data)
}
