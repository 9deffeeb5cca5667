import ArgumentParser
import DeskAudio
import DeskAudioC
import Glibc

/// `deskaudio record`: what the library hands a host, written to an Ogg Opus file.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record app audio and/or the microphone into an Ogg Opus file, until Ctrl-C or --seconds.",
        discussion: """
            The file holds exactly the Opus frames a host receives (48 kHz stereo, 10 ms); \
            time the zero gate held back is written as silence, so the file plays as long as \
            the recording ran. Ctrl-C (or SIGTERM) stops and finishes the file.

            Examples:
              deskaudio record --seconds 10 out.opus
              deskaudio record --app --mic --bitrate 64000 call.opus
              deskaudio record --complexity 5 --seconds 60 cheaper.opus
              deskaudio record --mic --device alsa_input.usb-mic.analog-stereo mic.opus
            """
    )

    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    @Option(help: ArgumentHelp("Opus bitrate in bits per second, 6000 to 510000.", valueName: "B"))
    var bitrate: Int32 = OpusFrameEncoder.defaultBitrate

    @Option(help: ArgumentHelp(
        "Opus encoder complexity, 0 (least CPU) to 10 (best quality, the default).", valueName: "C"))
    var complexity: Int32 = OpusFrameEncoder.defaultComplexity

    @Argument(help: ArgumentHelp("The Ogg Opus file to write.", valueName: "OUT.opus"))
    var output: String

    func validate() throws {
        if let seconds, !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be more than 0 and at most 86400")
        }
        guard OpusFrameEncoder.bitrateRange.contains(bitrate) else {
            let range = OpusFrameEncoder.bitrateRange
            throw ValidationError("--bitrate must be between \(range.lowerBound) and \(range.upperBound) bits per second")
        }
        guard OpusFrameEncoder.complexityRange.contains(complexity) else {
            let range = OpusFrameEncoder.complexityRange
            throw ValidationError("--complexity must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    func run() throws {
        InterruptSignal.install()
        let service = AudioService()
        let frameLimit = seconds.map { UInt64(($0 * 100).rounded()) } ?? .max
        let preSkip: Int32
        let silence: [UInt8]
        do throws(DeskAudioError) {
            try service.settings.setBitrate(bitrate)
            try service.settings.setComplexity(complexity)
            preSkip = try service.encoderLookahead()
            silence = try Self.silencePacket(bitrate: bitrate, complexity: complexity)
        } catch {
            throw CLIFailure(error, doing: "preparing the encoder")
        }
        let writer = try OggOpusWriter(
            path: output, preSkip: preSkip, vendor: "DeskAudio \(String(cString: deskaudio_version()!))")
        let recording = Recording(writer: writer, silence: silence, frameLimit: frameLimit)
        service.setFrameHandler { recording.take($0) }
        do {
            try capture.start(service)
        } catch {
            try? recording.finish(capturedFrames: 0)
            unlink(output)
            throw error
        }

        var monitor = CaptureMonitor(service: service)
        var display = StatusDisplay()
        while !InterruptSignal.wasRaised && !recording.isComplete && monitor.stats.framesCaptured < frameLimit {
            monitor.poll()
            display.note(monitor.warnings)
            display.show([statusLine(monitor, recording)], elapsedSeconds: monitor.elapsedSeconds)
            if let seconds, monitor.elapsedSeconds > seconds + 5 { break }  // the server stopped sending
        }
        try? service.enable(mic: false, app: false)
        service.setFrameHandler(nil)
        let captured = service.stats().framesCaptured
        try recording.finish(capturedFrames: captured)
        let (frames, silentFrames, bytes) = recording.progress
        print("wrote \(output): \(Double(frames) / 100) s, \(frames) frames (\(silentFrames) of gated silence), \(bytes) bytes")
    }

    private func statusLine(_ monitor: CaptureMonitor, _ recording: Recording) -> String {
        let (frames, _, bytes) = recording.progress
        let audioSeconds = Double(frames) / 100
        let kbps = audioSeconds > 0 ? Int((Double(bytes) * 8 / audioSeconds / 1000).rounded()) : 0
        var line = "\(formatTime(monitor.elapsedSeconds))  \(frames) frames  \(kbps) kbit/s"
        if let app = monitor.stats.app { line += "  app \(CaptureMonitor.decibels(app.peakDBFS))" }
        if let mic = monitor.stats.mic { line += "  mic \(CaptureMonitor.decibels(mic.peakDBFS))" }
        return line + "  gate \(monitor.gate.rawValue)"
    }

    private func formatTime(_ seconds: Double) -> String {
        let tenths = Int(seconds * 10)
        let minutes = tenths / 600
        let rest = tenths % 600
        return "\(minutes):\(rest < 100 ? "0" : "")\(rest / 10).\(rest % 10)"
    }

    /// One 10 ms frame of silence as the recording's encoder settings code it: what the
    /// file holds for time the gate held back.
    static func silencePacket(bitrate: Int32, complexity: Int32) throws(DeskAudioError) -> [UInt8] {
        let encoder = try OpusFrameEncoder(bitrate: bitrate, complexity: complexity)
        let zeros = [Float](repeating: 0, count: AudioFormat.frameFloats)
        var packet = [UInt8](repeating: 0, count: OpusFrameEncoder.maxPacketBytes)
        var length = 0
        for _ in 0..<3 {  // past the encoder's start-up
            length = try zeros.withUnsafeBufferPointer { samples throws(DeskAudioError) in
                try packet.withUnsafeMutableBufferPointer { output throws(DeskAudioError) in
                    try encoder.encode(samples, into: output)
                }
            }
        }
        return Array(packet[..<length])
    }
}
