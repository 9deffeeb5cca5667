import DeskAudioC
import Foundation
import DeskAudio
import Synchronization

/// Records what deskaudio_set_event_callback and deskaudio_set_log_callback deliver.
final class NoticeCollector: Sendable {
    private let received = LockedValue<[(kind: Int32, text: String)]>([])
    private let logs = LockedValue<[(level: Int32, text: String, atNs: UInt64)]>([])

    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    static let onEvent: deskaudio_event_callback = { event, detail, userData in
        let collector = Unmanaged<NoticeCollector>.fromOpaque(userData!).takeUnretainedValue()
        let text = String(cString: detail!)
        collector.received.withLock { $0.append((event, text)) }
    }

    static let onLog: deskaudio_log_callback = { level, message, userData in
        let collector = Unmanaged<NoticeCollector>.fromOpaque(userData!).takeUnretainedValue()
        let text = String(cString: message!)
        let now = MonotonicClock.nowNs()
        collector.logs.withLock { $0.append((level, text, now)) }
    }

    /// Events so far, in order.
    var events: [(kind: Int32, text: String)] { received.withLock { $0 } }
    /// Log messages so far, in order, with the monotonic time each came.
    var messages: [(level: Int32, text: String, atNs: UInt64)] { logs.withLock { $0 } }

    /// The kinds of the events so far.
    var kinds: [deskaudio_event] { events.compactMap { deskaudio_event(rawValue: $0.kind) } }

    /// A collector fed by this process's event callback and its log callback at `logLevel`
    /// until `stopListening()` (both callbacks are the process's: one collector at a time).
    static func listeningToTheProcess(logLevel: deskaudio_log_level) -> NoticeCollector {
        let notices = NoticeCollector()
        deskaudio_set_event_callback(onEvent, notices.userData)
        _ = deskaudio_set_log_callback(onLog, logLevel.rawValue, notices.userData)
        return notices
    }

    /// Clears the process's event and log callbacks set by `listeningToTheProcess`.
    func stopListening() {
        deskaudio_set_event_callback(nil, nil)
        _ = deskaudio_set_log_callback(nil, 0, nil)
    }
}
