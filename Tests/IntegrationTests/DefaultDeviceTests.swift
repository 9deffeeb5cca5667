import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

/// Switches the default sink to deskaudio_other, which plays 2 kHz, while app audio is
/// captured; returns seconds from the switch to the capture time of the first frame that
/// carries the 2 kHz tone, or nil if it never came.
func secondsToFollowTheDefaultSink(environment: [String: String] = [:]) throws -> Double? {
    defer {
        _ = try? ExternalTools.run(["pactl", "set-default-sink", "deskaudio_sink"], environment: environment)
    }
    var switchedAtNs: UInt64 = 0
    let collector = try capture(mic: false, app: true) {
        let player = try ExternalTools.playTone(
            frequency: 2000, amplitude: 0.5, seconds: 3, device: "deskaudio_other", environment: environment)
        Thread.sleep(forTimeInterval: 0.5)
        switchedAtNs = MonotonicClock.nowNs()
        let switched = try ExternalTools.run(
            ["pactl", "set-default-sink", "deskaudio_other"], environment: environment)
        #expect(switched.status == 0, "pactl: \(switched.error)")
        Thread.sleep(forTimeInterval: 1.5)
        player.terminate()
        player.waitUntilExit()
    }
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
            let seconds = try secondsToFollowTheDefaultSink()
            #expect(seconds != nil, "the new default sink's audio never arrived")
            if let seconds { #expect(seconds < 1, "took \(seconds) s") }
            print("measured: default sink switch, PipeWire: new sink's audio after \(seconds ?? -1) s")
        }

        @Test func pulseBackendFollowsTheDefaultSinkWithin1s() throws {
            #expect(deskaudio_set_backend("pulse") == deskaudio_status.DESKAUDIO_OK.rawValue)
            defer { _ = deskaudio_set_backend("auto") }
            let onPipeWirePulse = try secondsToFollowTheDefaultSink()
            var onPulseAudio: Double?
            try withPlainPulseAudio { environment in
                onPulseAudio = try secondsToFollowTheDefaultSink(environment: environment)
            }
            for seconds in [onPipeWirePulse, onPulseAudio] {
                #expect(seconds != nil, "the new default sink's audio never arrived")
                if let seconds { #expect(seconds < 1, "took \(seconds) s") }
            }
            print(
                "measured: default sink switch, pulse backend: pipewire-pulse \(onPipeWirePulse ?? -1) s, "
                    + "PulseAudio \(onPulseAudio ?? -1) s")
        }
    }
}
