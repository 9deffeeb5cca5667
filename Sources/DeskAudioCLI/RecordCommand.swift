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
            The file holds exactly the Opus frames a host receives (48 kHz stereo, 10 ms unless \
            --channels or --frame-ms say otherwise; 5.1 and 7.1 as Opus channel mapping family 1, \
            which ffmpeg, GStreamer and opusdec play with each channel in its place); \
            time the zero gate held back is written as silence, so the file plays as long as \
            the recording ran. Ctrl-C (or SIGTERM) stops and finishes the file.

            Examples:
              deskaudio record --seconds 10 out.opus
              deskaudio record --app --mic --bitrate 64000 call.opus
              deskaudio record --complexity 5 --seconds 60 cheaper.opus
              deskaudio record --frame-ms 5 --seconds 10 low-latency.opus
              deskaudio record --channels sink --seconds 10 surround.opus
              deskaudio record --mic --device alsa_input.usb-mic.analog-stereo mic.opus
            """
    )

    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    @Option(help: ArgumentHelp(
        "Opus bitrate in bits per second, 6000 to 510000 (default: 64000 mono, 128000 stereo, 256000 5.1, "
            + "450000 7.1).", valueName: "B"))
    var bitrate: Int32?

    @Option(help: ChannelsArgument.help)
    var channels = "2"

    @Flag(help: ArgumentHelp(
        "5.1 and 7.1 as one Opus stream per channel, none coupled: the channels kept apart, at a cost in bits "
            + "(default: libopus's surround encoder)."))
    var discrete = false

    @Option(help: ArgumentHelp(
        "Opus encoder complexity, 0 (least CPU) to 10 (best quality, the default).", valueName: "C"))
    var complexity: Int32 = OpusFrameEncoder.defaultComplexity

    @OptionGroup var frame: FrameLengthOption

    @Argument(help: ArgumentHelp("The Ogg Opus file to write.", valueName: "OUT.opus"))
    var output: String

    /// The stream split --discrete asks for.
    private var surroundStreams: OpusFrameEncoder.SurroundStreams { discrete ? .discrete : .coupled }

    /// The channel choice --channels names.
    private var channelChoice: ChannelChoice? { ChannelsArgument.choice(channels) }

    func validate() throws {
        if channelChoice == nil { throw ChannelsArgument.invalid }
        if let seconds, !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--seconds must be more than 0 and at most 86400")
        }
        if let bitrate, !OpusFrameEncoder.bitrateRange.contains(bitrate) {
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
        let duration = frame.duration
        let framesPerSecond = 1_000_000 / Double(duration.microseconds)
        let frameLimit = seconds.map { UInt64(($0 * framesPerSecond).rounded()) } ?? .max
        let preSkip: Int32
        let silence: [UInt8]
        let mapping: OpusChannelMapping
        do throws(DeskAudioError) {
            if let bitrate { try service.settings.setBitrate(bitrate) }
            try service.settings.setComplexity(complexity)
            service.settings.setFrameDuration(duration)
            service.setBackend(capture.backend.backend)
            service.setChannels(channelChoice ?? .layout(.stereo))
            service.setSurroundStreams(surroundStreams)
            let layout: ChannelLayout
            (layout, mapping) = try service.prepareChannels()
            preSkip = try service.encoderLookahead()
            silence = try Self.silencePacket(
                duration, layout: layout, bitrate: service.settings.requestedBitrate, complexity: complexity,
                surroundStreams: surroundStreams)
        } catch {
            throw CLIFailure(error, doing: "preparing the encoder")
        }
        let writer = try OggOpusWriter(
            path: output, preSkip: preSkip, vendor: "DeskAudio \(String(cString: deskaudio_version()!))", mapping: mapping)
        let recording = Recording(
            writer: writer, silence: silence, silenceSamples: duration.samples, frameLimit: frameLimit)
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
            display.show([statusLine(monitor, recording, framesPerSecond)], elapsedSeconds: monitor.elapsedSeconds)
            if let seconds, monitor.elapsedSeconds > seconds + 5 { break }  // the server stopped sending
        }
        try? service.enable(mic: false, app: false)
        service.setFrameHandler(nil)
        let final = service.stats()
        try recording.finish(capturedFrames: final.framesCaptured)
        let (frames, silentFrames, bytes) = recording.progress
        // Audio lost before it reached the library (its threads were not run in time).
        let skipped = final.framesSkippedByServer > 0 ? ", \(final.framesSkippedByServer) frames' worth skipped by the server" : ""
        print(
            "wrote \(output): \(Double(frames) / framesPerSecond) s, \(frames) frames of \(duration.description) "
                + "(\(silentFrames) of gated silence), \(bytes) bytes\(skipped)")
    }

    private func statusLine(_ monitor: CaptureMonitor, _ recording: Recording, _ framesPerSecond: Double) -> String {
        let (frames, _, bytes) = recording.progress
        let audioSeconds = Double(frames) / framesPerSecond
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

    /// One frame of `duration` of silence as the recording's encoder settings code it: what
    /// the file holds for time the gate held back.
    static func silencePacket(
        _ duration: FrameDuration, layout: ChannelLayout, bitrate: Int32, complexity: Int32,
        surroundStreams: OpusFrameEncoder.SurroundStreams
    ) throws(DeskAudioError) -> [UInt8] {
        let encoder = try OpusFrameEncoder(
            layout: layout, bitrate: bitrate, complexity: complexity, surroundStreams: surroundStreams)
        let zeros = [Float](repeating: 0, count: duration.samples * layout.channels)
        var packet = [UInt8](repeating: 0, count: OpusFrameEncoder.maxPacketBytes(for: layout))
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
