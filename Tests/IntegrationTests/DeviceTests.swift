import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

/// Devices as deskaudio_list_devices() reports them, or its negative status.
func listedDevices() -> Result<[CaptureDevice], DeskAudioTestFailure> {
    final class Box { var devices: [CaptureDevice] = [] }
    let box = Box()
    let count = deskaudio_list_devices(
        { kind, name, description, isDefault, userData in
            let box = Unmanaged<Box>.fromOpaque(userData!).takeUnretainedValue()
            box.devices.append(
                CaptureDevice(
                    kind: CaptureDevice.Kind(rawValue: kind)!, name: String(cString: name!),
                    description: String(cString: description!), isDefault: isDefault))
        }, Unmanaged.passUnretained(box).toOpaque())
    guard count >= 0 else { return .failure(DeskAudioTestFailure(status: count)) }
    #expect(Int(count) == box.devices.count, "the count returned is the number of callbacks")
    return .success(box.devices)
}

/// A negative status from the C API, with its message.
struct DeskAudioTestFailure: Error, CustomStringConvertible {
    let status: Int32
    let message = String(cString: deskaudio_last_error()!)
    var description: String { "status \(status): \(message)" }
}

/// Runs `body` once per server path: native PipeWire, the pulse backend on pipewire-pulse,
/// and the plain PulseAudio daemon; `body` gets a label and the players' environment.
func onEveryServerPath(_ body: (String, [String: String]) throws -> Void) throws {
    try body("PipeWire", [:])
    #expect(deskaudio_set_backend("pulse") == deskaudio_status.DESKAUDIO_OK.rawValue)
    defer { _ = deskaudio_set_backend("auto") }
    try body("pipewire-pulse", [:])
    try withPlainPulseAudio { environment in try body("PulseAudio", environment) }
}

/// Level (dBFS) of `frequency` over the middle of what `collector` captured.
func capturedToneLevel(_ collector: FrameCollector, frequency: Double) throws -> Double {
    SignalAnalysis.toneLevelWherePresent(try collector.decoded(), frequency: frequency)
}

/// On every server path: names deskaudio_other (app) or deskaudio_other_mic (mic), which
/// carry 2 kHz, while the defaults carry 1 kHz (app) and 440 Hz (mic); expects the named
/// device's tone at its level and the default's tone absent.
func expectTheNamedDeviceCaptured(mic: Bool) throws {
    let choose = mic ? deskaudio_set_mic_device : deskaudio_set_app_device
    defer { _ = choose(nil) }
    try onEveryServerPath { path, environment in
        #expect(choose(mic ? "deskaudio_other_mic" : "deskaudio_other") == deskaudio_status.DESKAUDIO_OK.rawValue)
        let collector = try capture(mic: mic, app: !mic) {
            let other = try ExternalTools.playTone(
                frequency: 2000, amplitude: 0.3, seconds: 1.5, device: "deskaudio_other", environment: environment)
            try playMicAndAppTones(environment: environment)
            other.waitUntilExit()
        }
        #expect(choose(nil) == deskaudio_status.DESKAUDIO_OK.rawValue)
        let named = try capturedToneLevel(collector, frequency: 2000)
        let decoded = try collector.decoded()
        let defaultTone = SignalAnalysis.toneLevelDecibels(
            SignalAnalysis.left(decoded[...]), frequency: mic ? 440 : 1000)
        let kind = mic ? "source" : "sink"
        #expect(abs(named - quietSineLevel) <= 1, "\(path): 2 kHz of the named \(kind) at \(named) dBFS")
        #expect(defaultTone < -60, "\(path): the default \(kind)'s tone at \(defaultTone) dBFS")
        print("measured: \(path) named \(kind): its 2 kHz \(named) dBFS, the default's tone \(defaultTone) dBFS")
    }
}

extension RealServerTests {
    @Suite struct DeviceTests {
        @Test func theRigsDevicesAreListedWithTheirDefaultsOnEveryServerPath() throws {
            try onEveryServerPath { path, _ in
                let devices = try listedDevices().get()
                let sinks = devices.filter { $0.kind == .sink }.map(\.name)
                let sources = devices.filter { $0.kind == .source }.map(\.name)
                for sink in ["deskaudio_sink", "deskaudio_other", "deskaudio_micfeed"] {
                    #expect(sinks.contains(sink), "\(path): \(sinks)")
                }
                #expect(Set(sources) == ["deskaudio_mic", "deskaudio_other_mic"], "\(path): no monitors: \(sources)")
                #expect(devices.filter(\.isDefault).map(\.name).sorted() == ["deskaudio_mic", "deskaudio_sink"], "\(path)")
                #expect(devices.first { $0.name == "deskaudio_sink" }?.description == "DeskAudio-test-sink", "\(path)")
                print("measured: \(path) lists \(sinks.count) sinks, \(sources.count) sources")
            }
        }

        @Test func aNamedSinkIsCapturedInsteadOfTheDefaultOnEveryServerPath() throws {
            try expectTheNamedDeviceCaptured(mic: false)
        }

        @Test func aNamedSourceIsCapturedAsTheMicrophoneOnEveryServerPath() throws {
            try expectTheNamedDeviceCaptured(mic: true)
        }

        @Test func unknownNamesAndNamesOfTheWrongKindAreRefused() throws {
            try onEveryServerPath { path, _ in
                let noDevice = deskaudio_status.DESKAUDIO_ERROR_NO_DEVICE.rawValue
                #expect(deskaudio_set_app_device("no_such_sink") == noDevice, "\(path)")
                #expect(String(cString: deskaudio_last_error()!).contains("no_such_sink"), "\(path)")
                #expect(deskaudio_set_app_device("deskaudio_mic") == noDevice, "\(path): a source is no sink")
                #expect(deskaudio_set_mic_device("deskaudio_sink") == noDevice, "\(path): a sink is no mic")
                #expect(deskaudio_set_mic_device("deskaudio_sink.monitor") == noDevice, "\(path): a monitor is no mic")
                #expect(deskaudio_set_app_device("") == deskaudio_status.DESKAUDIO_OK.rawValue, "\(path)")
                #expect(deskaudio_set_mic_device(nil) == deskaudio_status.DESKAUDIO_OK.rawValue, "\(path)")
            }
            #expect(deskaudio_list_devices(nil, nil) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
        }

        @Test func choosingASinkWhileCapturingMovesCaptureThereInSequence() throws {
            defer { _ = deskaudio_set_app_device(nil) }
            let collector = try capture(mic: false, app: true) {
                let other = try ExternalTools.playTone(
                    frequency: 2000, amplitude: 0.3, seconds: 2, device: "deskaudio_other")
                let main = try ExternalTools.playTone(frequency: 1000, amplitude: 0.3, seconds: 2)
                Thread.sleep(forTimeInterval: 0.8)
                #expect(deskaudio_set_app_device("deskaudio_other") == deskaudio_status.DESKAUDIO_OK.rawValue)
                other.waitUntilExit()
                main.waitUntilExit()
            }
            let frames = try collector.parsed()
            let sequences = frames.map(\.header.sequence)
            #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $1 == $0 &+ 1 }, "sequence continuous")
            let decoded = try collector.decoded()
            let levels = stride(from: 0, to: decoded.count - 960, by: 960).map { start in
                let frame = SignalAnalysis.left(decoded[start..<(start + 960)])
                return (SignalAnalysis.toneLevelDecibels(frame, frequency: 1000),
                        SignalAnalysis.toneLevelDecibels(frame, frequency: 2000))
            }
            let firstOther = levels.firstIndex { $0.1 > -20 }
            let lastDefault = levels.lastIndex { $0.0 > -20 }
            #expect(firstOther != nil && lastDefault != nil, "both sinks were heard in turn")
            if let firstOther, let lastDefault {
                // The 10 ms windows are cut at fixed steps, not at the switch, so the one window
                // the switch falls in may hold the end of one tone and the start of the other.
                // Two or more such windows would mean both sinks were captured at once.
                #expect(lastDefault <= firstOther, "the default sink's tone stops where the other's starts")
            }
        }

        @Test func pipewireRefusesAMonitorAsTheDefaultMicrophone() throws {
            _ = try ExternalTools.run(["pactl", "set-default-source", "deskaudio_sink.monitor"])
            defer { _ = try? ExternalTools.run(["pactl", "set-default-source", "deskaudio_mic"]) }
            #expect(waitUntil(seconds: 2) {
                (try? ExternalTools.run(["pactl", "get-default-source"]).output)?.contains("deskaudio_sink") == true
            })
            #expect(enable_audio(true, false) == deskaudio_status.DESKAUDIO_ERROR_STREAM.rawValue)
            #expect(String(cString: deskaudio_last_error()!).contains("is a sink monitor, not a microphone"))
            #expect(String(cString: deskaudio_backend()!) == "", "nothing left running")
        }
    }
}
