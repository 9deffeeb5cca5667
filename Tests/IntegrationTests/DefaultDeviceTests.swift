import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

/// Switches the default sink to deskaudio_other (or, for `mic`, the default source to
/// deskaudio_other_mic, which hears deskaudio_other), which plays 2 kHz, while app audio (or
/// the mic) is captured; returns seconds from the switch to the capture time of the first
/// frame that carries the 2 kHz tone, or nil if it never came. Expects a DEVICE_CHANGED event
/// naming the new device.
func secondsToFollowTheDefault(mic: Bool = false, environment: [String: String] = [:]) throws -> Double? {
    let (command, original, switched) =
        mic
        ? ("set-default-source", "deskaudio_mic", "deskaudio_other_mic")
        : ("set-default-sink", "deskaudio_sink", "deskaudio_other")
    defer { _ = try? ExternalTools.run(["pactl", command, original], environment: environment) }
    let notices = NoticeCollector()
    deskaudio_set_event_callback(NoticeCollector.onEvent, notices.userData)
    defer { deskaudio_set_event_callback(nil, nil) }
    var switchedAtNs: UInt64 = 0
    let collector = try capture(mic: mic, app: !mic) {
        let player = try ExternalTools.playTone(
            frequency: 2000, amplitude: 0.5, seconds: 3, device: "deskaudio_other", environment: environment)
        Thread.sleep(forTimeInterval: 0.5)
        switchedAtNs = MonotonicClock.nowNs()
        let result = try ExternalTools.run(["pactl", command, switched], environment: environment)
        #expect(result.status == 0, "pactl: \(result.error)")
        Thread.sleep(forTimeInterval: 1.5)
        player.terminate()
        player.waitUntilExit()
    }
    let changed = mic ? "the microphone: deskaudio_other_mic" : "app audio: deskaudio_other.monitor"
    let changes = notices.events.filter { deskaudio_event(rawValue: $0.kind) == .DESKAUDIO_EVENT_DEVICE_CHANGED }
    #expect(changes.map(\.text) == [changed], "events: \(notices.events)")
    let frames = try collector.parsed()
    let decoded = try collector.decoded()
    let first = frames.indices.first { index in
        let frame = SignalAnalysis.left(decoded[(index * 960)..<(index * 960 + 960)])
        return SignalAnalysis.toneLevelDecibels(frame, frequency: 2000) > -20
    }
    return first.map { Double(Int64(frames[$0].header.captureTimeNs) - Int64(switchedAtNs)) / 1e9 }
}

extension RealServerTests {
    @Suite struct DefaultDeviceTests {
        @Test func pipewireFollowsTheDefaultSinkWithin1s() throws {
            let seconds = try secondsToFollowTheDefault()
            #expect(seconds != nil, "the new default sink's audio never arrived")
            if let seconds { #expect(seconds < 1, "took \(seconds) s") }
            print("measured: default sink switch, PipeWire: new sink's audio after \(seconds ?? -1) s")
        }

        @Test func pulseBackendFollowsTheDefaultSinkWithin1s() throws {
            #expect(deskaudio_set_backend("pulse") == deskaudio_status.DESKAUDIO_OK.rawValue)
            defer { _ = deskaudio_set_backend("auto") }
            let onPipeWirePulse = try secondsToFollowTheDefault()
            var onPulseAudio: Double?
            try withPlainPulseAudio { environment in
                onPulseAudio = try secondsToFollowTheDefault(environment: environment)
            }
            for seconds in [onPipeWirePulse, onPulseAudio] {
                #expect(seconds != nil, "the new default sink's audio never arrived")
                if let seconds { #expect(seconds < 1, "took \(seconds) s") }
            }
            print(
                "measured: default sink switch, pulse backend: pipewire-pulse \(onPipeWirePulse ?? -1) s, "
                    + "PulseAudio \(onPulseAudio ?? -1) s")
        }

        @Test func theDefaultSourceIsFollowedWithin1sOnEveryServerPath() throws {
            var measured: [String] = []
            try onEveryServerPath { path, environment in
                let seconds = try secondsToFollowTheDefault(mic: true, environment: environment)
                #expect(seconds != nil, "\(path): the new default source's audio never arrived")
                if let seconds { #expect(seconds < 1, "\(path): took \(seconds) s") }
                measured.append("\(path) \(seconds ?? -1) s")
            }
            print("measured: default source switch: \(measured.joined(separator: ", "))")
        }
    }
}
