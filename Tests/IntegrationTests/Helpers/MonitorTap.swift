import Foundation
import TestSupport

/// An independent recorder of a sink's monitor (48 kHz stereo, 20 ms latency), running
/// beside a capture: what the sink carried at the same time. A gap it hears too came from
/// upstream (the player or the server missed a period on this loaded 2-core machine:
/// ../shared/README.md), not from the library; a gap only the library's frames have is ours,
/// unless the tone came out that much longer than played (a tap starved with the player loses
/// the sink's silence: R-TAP-STARVED, `sinkSilenceBlocks`).
///
/// On PipeWire it is pw-record, a native client in a process of its own: pacat would be served
/// by pipewire-pulse, the process that also serves the players, so a pipewire-pulse that runs
/// late (which puts silence in the sink) would make the tap lose cycles at the same time and
/// miss that silence. On plain PulseAudio it is pacat. The sink is named, not
/// @DEFAULT_MONITOR@: pipewire-pulse 0.3.65 records the default source for that (silence on
/// the rig), so the tap heard nothing at all on Debian 12.
final class MonitorTap {
    private let recorder: Process
    private let file: URL
    private let nativePipeWire: Bool

    /// Starts recording the monitor of `sink` (the default sink unless named; "NAME.monitor"
    /// is read as NAME), or the source `source` where one is named, on the server
    /// `environment` reaches; returns once the recorder runs.
    init(sink: String? = nil, source: String? = nil, environment: [String: String] = [:]) throws {
        let pactl = { (arguments: [String]) in try ExternalTools.run(["pactl"] + arguments, environment: environment).output }
        let sinkName = try sink.map { $0.hasSuffix(".monitor") ? String($0.dropLast(".monitor".count)) : $0 }
            ?? pactl(["get-default-sink"]).trimmingCharacters(in: .whitespacesAndNewlines)
        nativePipeWire = try pactl(["info"]).contains("on PipeWire")
        let name = "deskaudio-tap-\(UUID().uuidString)"
        file = FileManager.default.temporaryDirectory.appendingPathComponent(name + (nativePipeWire ? ".wav" : ".f32"))
        let command =
            nativePipeWire
            ? [
                "pw-record", "--target", source ?? sinkName, "-P",
                "{ \(source == nil ? "stream.capture.sink=true " : "")node.name=\(name) }",
                "--latency", "20ms", "--format", "s16", "--rate", "48000", "--channels", "2", file.path,
            ]
            : [
                "pacat", "--record", "--raw", "--device=\(source ?? sinkName + ".monitor")", "--format=float32le",
                "--rate=48000", "--channels=2", "--latency-msec=20", file.path,
            ]
        (recorder, _, _) = try ExternalTools.start(command, environment: environment)
        Thread.sleep(forTimeInterval: 0.3)
    }

    deinit {
        if recorder.isRunning { recorder.terminate() }
        try? FileManager.default.removeItem(at: file)
    }

    /// Stops recording; the samples it heard.
    func finish() throws -> [Float] {
        recorder.interrupt()
        recorder.waitUntilExit()
        if nativePipeWire { return try ExternalTools.readWav16(file.path) }
        let data = try Data(contentsOf: file)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Runs `body` with a tap on `monitor` (a sink's monitor, "NAME.monitor"; the default
    /// sink's if nil), or on the source `source` where one is named; returns its result and
    /// what the tap heard.
    static func recording<Result>(
        _ monitor: String? = nil, source: String? = nil, environment: [String: String] = [:],
        _ body: () throws -> Result
    ) throws -> (Result, ToneCheck) {
        let tap = try MonitorTap(sink: monitor, source: source, environment: environment)
        let result = try body()
        return (result, ToneCheck(try tap.finish()))
    }
}
