import Foundation
import TestSupport

/// An independent recorder of a sink's monitor (pacat, 48 kHz stereo float, 20 ms latency),
/// running beside a capture: what the sink carried at the same time. A gap it hears too came
/// from upstream (the player or the server missed a period on this loaded 2-core machine:
/// ../shared/README.md), not from the library; a gap only the library's frames have is ours.
final class MonitorTap {
    private let recorder: Process
    private let file: URL

    /// Starts recording `monitor` (the default sink's unless named) on the server
    /// `environment` reaches; returns once the recorder is running.
    init(monitor: String = "@DEFAULT_MONITOR@", environment: [String: String] = [:]) throws {
        file = FileManager.default.temporaryDirectory.appendingPathComponent("deskaudio-tap-\(UUID().uuidString).f32")
        (recorder, _, _) = try ExternalTools.start(
            [
                "pacat", "--record", "--raw", "--device=\(monitor)", "--format=float32le", "--rate=48000",
                "--channels=2", "--latency-msec=20", file.path,
            ], environment: environment)
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
        let data = try Data(contentsOf: file)
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Runs `body` with a tap on `monitor`; returns its result and what the tap heard.
    static func recording<Result>(
        _ monitor: String = "@DEFAULT_MONITOR@", environment: [String: String] = [:], _ body: () throws -> Result
    ) throws -> (Result, ToneCheck) {
        let tap = try MonitorTap(monitor: monitor, environment: environment)
        let result = try body()
        return (result, ToneCheck(try tap.finish()))
    }
}
