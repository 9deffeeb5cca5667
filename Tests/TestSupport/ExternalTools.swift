import Foundation
import Glibc

/// Runs the command-line tools the integration tests drive: players, decoders, the C example.
public enum ExternalTools {
    /// Result of a finished process.
    public struct Outcome {
        public var status: Int32
        public var output: String
        public var error: String
    }

    /// Starts `arguments` (looked up on PATH) with `environment` added; does not wait.
    public static func start(
        _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        // A child inherits the spawning thread's blocked signals, and a test may run on a
        // thread an audio library's thread started, with all of them blocked (libpulse's
        // main loop does that): parecord would then never see the SIGINT that ends it.
        var all = sigset_t()
        var previous = sigset_t()
        sigfillset(&all)
        pthread_sigmask(SIG_UNBLOCK, &all, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        return (process, output, error)
    }

    /// The next line `pipe` carries, without its newline: waits for it (or for the writer's
    /// end, returning what came before it).
    public static func readLine(_ pipe: Pipe) -> String {
        var line: [UInt8] = []
        while true {
            let byte = pipe.fileHandleForReading.readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { break }
            line.append(first)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// Runs `arguments` to completion.
    public static func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Outcome {
        let (process, output, error) = try start(arguments, environment: environment)
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
            error: String(decoding: errorData, as: UTF8.self))
    }

    /// Plays a sine (stereo, or one channel if `mono`) through pacat into `device` (default:
    /// the default sink), as the application `application` (pacat's client name) if given;
    /// returns the running player.
    public static func playTone(
        frequency: Double, amplitude: Float, seconds: Double, device: String? = nil, mono: Bool = false,
        application: String? = nil, environment: [String: String] = [:]
    ) throws -> Process {
        let stereo = SignalAnalysis.sine(
            frequency: frequency, amplitude: amplitude, frames: Int(seconds * 48_000))
        return try play(
            mono ? SignalAnalysis.left(stereo[...]) : stereo, channels: mono ? 1 : 2, device: device,
            application: application, environment: environment)
    }

    /// Plays interleaved 48 kHz float `samples` of `channels` channels through pacat, as
    /// `playTone` does; returns the running player.
    public static func play(
        _ samples: [Float], channels: Int = 2, device: String? = nil, application: String? = nil,
        environment: [String: String] = [:]
    ) throws -> Process {
        let file = FileManager.default.temporaryDirectory
            .appendingPathComponent("deskaudio-tone-\(UUID().uuidString).f32")
        try samples.withUnsafeBytes { Data($0) }.write(to: file)
        let (process, _, _) = try start(
            [
                // 200 ms of server-side buffer: a busy test machine must not starve the player.
                "pacat", "--playback", "--raw", "--latency-msec=200", "--format=float32le", "--rate=48000",
                "--channels=\(channels)",
            ] + (device.map { ["--device=\($0)"] } ?? []) + (application.map { ["--client-name=\($0)"] } ?? [])
                + [file.path], environment: environment)
        process.terminationHandler = { _ in try? FileManager.default.removeItem(at: file) }
        return process
    }

    /// Interleaved samples of a 16-bit PCM WAV file, as floats in [-1, 1).
    public static func readWav16(_ path: String) throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var offset = 12
        while offset + 8 <= data.count {
            let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
            let size = data[offset + 4..<offset + 8].enumerated().reduce(0) {
                $0 | Int($1.element) << (8 * $1.offset)
            }
            if id == "data" {
                let body = data[(offset + 8)..<min(offset + 8 + size, data.count)]
                return stride(from: body.startIndex, to: body.endIndex - 1, by: 2).map {
                    Float(Int16(bitPattern: UInt16(body[$0]) | UInt16(body[$0 + 1]) << 8)) / 32768
                }
            }
            offset += 8 + size + (size & 1)
        }
        throw CocoaError(.fileReadCorruptFile)
    }
}
