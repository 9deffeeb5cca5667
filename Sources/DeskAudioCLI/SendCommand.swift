import ArgumentParser
import DeskAudio
import Glibc
import Synchronization

/// `deskaudio send`: this machine's sound, as a host would send it, over UDP: AudioFrames to a
/// `receive`, or standard RTP (RFC 7587) to any RTP receiver, with the SDP that describes it.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Capture app audio and/or the microphone and send it over UDP, as AudioFrames or as RTP, until Ctrl-C or --seconds.",
        discussion: """
            --to: one AudioFrame per datagram, exactly the bytes a host's frame callback gets \
            (10 ms of 48 kHz stereo Opus unless --channels or --frame-ms say otherwise; zero \
            gate: nothing is sent through long silence); `deskaudio receive` on the other \
            machine plays it. --rtp: one RTP packet per frame (the frame's Opus packet, RFC \
            7587; 5.1 and 7.1 as WebRTC's multiopus), played by ffmpeg, GStreamer or an SFU \
            from the SDP --sdp writes (docs/rtp.md). No encryption and no retransmission: for \
            a network you trust.

            Examples:
              deskaudio send --to 192.168.1.20:5004              # what this machine plays
              deskaudio send --to viewer.lan:5004 --app --mic
              deskaudio send --rtp 127.0.0.1:5004 --sdp stream.sdp
              ffplay -protocol_whitelist file,udp,rtp stream.sdp
            """
    )

    @Option(help: ArgumentHelp("Send AudioFrames to HOST:PORT (or [IPV6]:PORT), for deskaudio receive.", valueName: "HOST:PORT"))
    var to: String?

    @Option(help: ArgumentHelp("Send RTP to HOST:PORT (or [IPV6]:PORT) instead.", valueName: "HOST:PORT"))
    var rtp: String?

    @Option(help: ArgumentHelp("With --rtp: write the stream's SDP to this file, for the receiver.", valueName: "FILE"))
    var sdp: String?

    @Option(help: ArgumentHelp("With --rtp: the RTP payload type, 96-127 (default 111).", valueName: "PT"))
    var payloadType: UInt8 = 111

    @OptionGroup var capture: CaptureOptions

    @Option(help: ChannelsArgument.help)
    var channels = "2"

    @OptionGroup var frame: FrameLengthOption

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
        guard (to == nil) != (rtp == nil) else { throw ValidationError("give one of --to (AudioFrames) or --rtp") }
        if rtp == nil && sdp != nil { throw ValidationError("--sdp goes with --rtp") }
        if ChannelsArgument.choice(channels) == nil { throw ChannelsArgument.invalid }
        _ = try UDPSocket.split(to ?? rtp ?? "")
    }

    func run() throws {
        InterruptSignal.install()
        let destination = to ?? rtp ?? ""
        let socket = try UDPSocket.sending(to: destination)
        let counts = SendCounts()
        let service = AudioService()
        let duration = frame.duration
        service.settings.setFrameDuration(duration)
        service.setBackend(capture.backend.backend)
        service.setChannels(ChannelsArgument.choice(channels) ?? .layout(.stereo))
        if rtp != nil {
            let packetizer = try startRTP(service, duration: duration, destination: destination)
            let packet = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPPacketizer.maxPacketByteCount, alignment: 8)
            defer { packet.deallocate() }
            // Used only inside the frame handler, on the library's delivery thread.
            let stream = LoopBound((packetizer: packetizer, packet: packet), on: "the frame handler's thread") {
                [unowned service] in service.isInsideFrameHandler
            }
            service.setFrameHandler { frame in
                stream.withValue { stream in
                    guard let length = try? stream.packetizer.packetize(frame, into: stream.packet) else {
                        return counts.refused()
                    }
                    counts.add(length, sent: socket.send(UnsafeRawBufferPointer(rebasing: stream.packet[0..<length])))
                }
            }
            try send(service, counts: counts, destination: destination)
        } else {
            service.setFrameHandler { frame in counts.add(frame.count, sent: socket.send(frame)) }
            try send(service, counts: counts, destination: destination)
        }
    }

    /// The packetizer for the capture's format (its channels and frame length, so that the
    /// SDP, written now, holds before any frame), the SDP written to --sdp.
    private func startRTP(_ service: AudioService, duration: FrameDuration, destination: String) throws -> RTPPacketizer {
        let (host, port) = try UDPSocket.split(destination)
        do throws(DeskAudioError) {
            let (layout, mapping) = try service.prepareChannels()
            let packetizer = try RTPPacketizer(payloadType: payloadType, ssrc: 0)
            try packetizer.declare(
                RTPStreamFormat(
                    channels: layout.channels, mapping: layout.mappingFamily == 0 ? nil : mapping,
                    frameSamples: duration.samples))
            if let sdp {
                let text = try packetizer.sessionDescription(address: host, port: UInt16(port) ?? 0)
                guard let file = fopen(sdp, "w"), fputs(text, file) >= 0, fclose(file) == 0 else {
                    throw .invalidArgument("cannot write \(sdp): \(String(cString: strerror(errno)))")
                }
            }
            return packetizer
        } catch {
            throw CLIFailure(error, doing: "preparing the RTP stream")
        }
    }

    /// Captures until Ctrl-C or --seconds, showing what was sent.
    private func send(_ service: AudioService, counts: SendCounts, destination: String) throws {
        try capture.start(service)
        var monitor = CaptureMonitor(service: service)
        monitor.show(until: seconds) { monitor in
            ["sent \(counts.frames.load(ordering: .relaxed)) \(rtp == nil ? "frames" : "packets")  "
                + "\(counts.bytes.load(ordering: .relaxed)) bytes  " + monitor.sourcesAndGate]
        }
        try? service.enable(mic: false, app: false)
        service.setFrameHandler(nil)
        let failed = counts.failed.load(ordering: .relaxed)
        // Audio lost before it reached the library (its threads were not run in time).
        let skipped = service.stats().framesSkippedByServer
        print(
            "sent \(counts.frames.load(ordering: .relaxed)) \(rtp == nil ? "frames" : "RTP packets"), "
                + "\(counts.bytes.load(ordering: .relaxed)) bytes to \(destination)"
                + (failed > 0 ? "; \(failed) refused by the system or the packetizer" : "")
                + (skipped > 0 ? ", \(skipped) frames' worth skipped by the server" : ""))
    }
}

/// What `send` has sent, counted on the library's delivery thread.
private final class SendCounts: Sendable {
    let frames = Atomic<UInt64>(0)
    let bytes = Atomic<UInt64>(0)
    let failed = Atomic<UInt64>(0)

    func add(_ count: Int, sent: Bool) {
        guard sent else { return refused() }
        frames.add(1, ordering: .relaxed)
        bytes.add(UInt64(count), ordering: .relaxed)
    }

    func refused() { failed.add(1, ordering: .relaxed) }
}
