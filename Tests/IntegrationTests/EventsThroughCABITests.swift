import DeskAudio
import DeskAudioC
import Foundation
import Synchronization
import TestSupport
import Testing

extension RealServerTests {
    /// The event and log callbacks, on the real server.
    @Suite struct EventsThroughCABITests {
        @Test func startChoosingADeviceAndStopAreReported() throws {
            let notices = NoticeCollector()
            deskaudio_set_event_callback(NoticeCollector.onEvent, notices.userData)
            #expect(
                deskaudio_set_log_callback(
                    NoticeCollector.onLog, deskaudio_log_level.DESKAUDIO_LOG_INFO.rawValue, notices.userData)
                    == deskaudio_status.DESKAUDIO_OK.rawValue)
            defer {
                deskaudio_set_event_callback(nil, nil)
                _ = deskaudio_set_log_callback(nil, 0, nil)
                _ = deskaudio_set_app_device(nil)
            }
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(deskaudio_set_app_device("deskaudio_other") == deskaudio_status.DESKAUDIO_OK.rawValue)
            // Stopped once the new device is connected: a stop before that rightly reports no
            // connection to it (one CI run stopped 44 ms in, with only the first event).
            #expect(waitUntil(seconds: 3) { notices.kinds.count >= 3 }, "\(notices.events)")
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 2) { notices.messages.contains { $0.text == "app audio stopped" } })

            let events = notices.events
            #expect(
                notices.kinds == [.DESKAUDIO_EVENT_CONNECTED, .DESKAUDIO_EVENT_CONNECTED, .DESKAUDIO_EVENT_DEVICE_CHANGED],
                "\(events)")
            #expect(events.first?.text == "app audio: the default sink's monitor via pipewire")
            #expect(events.last?.text == "app audio: deskaudio_other")
            #expect(notices.messages.allSatisfy { $0.level <= deskaudio_log_level.DESKAUDIO_LOG_INFO.rawValue })
            #expect(notices.messages.contains { $0.text == "app audio capturing the default sink's monitor via pipewire" })
        }

        @Test func aLogLevelFiltersAndAnUnknownLevelIsRefused() throws {
            let notices = NoticeCollector()
            #expect(
                deskaudio_set_log_callback(NoticeCollector.onLog, 9, notices.userData)
                    == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            _ = deskaudio_set_log_callback(
                NoticeCollector.onLog, deskaudio_log_level.DESKAUDIO_LOG_ERROR.rawValue, notices.userData)
            defer { _ = deskaudio_set_log_callback(nil, 0, nil) }
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(enable_audio(false, false) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(deskaudio_set_app_device("no_such_sink") == deskaudio_status.DESKAUDIO_ERROR_NO_DEVICE.rawValue)
            #expect(deskaudio_set_backend("pipewire") == 0)
            defer { _ = deskaudio_set_backend("auto") }
            setenv("PIPEWIRE_REMOTE", "deskaudio-no-such-daemon", 1)
            defer { unsetenv("PIPEWIRE_REMOTE") }
            #expect(enable_audio(false, true) != deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 2) { !notices.messages.isEmpty })
            Thread.sleep(forTimeInterval: 0.1)
            #expect(
                notices.messages.map(\.level) == [deskaudio_log_level.DESKAUDIO_LOG_ERROR.rawValue],
                "only the failed start, at error level: \(notices.messages)")
        }

        @Test func anEventCallbackMayCallBackIntoTheLibrary() throws {
            final class Box: Sendable { let status = Atomic<Int32>(1) }
            let box = Box()
            deskaudio_set_event_callback({ event, _, userData in
                guard event == deskaudio_event.DESKAUDIO_EVENT_CONNECTED.rawValue else { return }
                let box = Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue()
                box.status.store(enable_audio(false, false), ordering: .releasing)  // stops capture from inside the callback
                deskaudio_set_event_callback(nil, nil)
            }, Unmanaged.passUnretained(box).toOpaque())
            #expect(enable_audio(false, true) == deskaudio_status.DESKAUDIO_OK.rawValue)
            #expect(waitUntil(seconds: 3) { box.status.load(ordering: .acquiring) == 0 }, "enable_audio inside the callback returned OK")
            #expect(String(cString: deskaudio_backend()!) == "", "capture stopped")
        }
    }
}
