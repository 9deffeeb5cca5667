import ArgumentParser
import DeskAudio

/// `deskaudio talk`: the viewer's side of a two-way session in one process: plays the host's
/// AudioFrames on the speakers and sends the microphone back, its echo of the speakers
/// cancelled against what the player played.
struct TalkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "talk",
        abstract: "Play the host's AudioFrames from UDP and send the microphone back to HOST:PORT, echo-cancelled, until Ctrl-C or --seconds.",
        discussion: """
            The host sends its sound here (deskaudio send --to THIS-MACHINE:PORT, or a host's \
            frame callback) and plays what comes back as a microphone (deskaudio receive \
            --listen PORT --as-mic NAME, or deskaudio_remote_mic). What the speakers play is \
            taken out of the microphone before it is encoded (speexdsp's canceller; the delay \
            from speakers to microphone is found by itself, up to 600 ms), so the host does \
            not hear itself. The status line shows packets received, frames sent, the echo \
            return loss enhancement and the delay found.

            Example, the host at 192.168.1.10 and this viewer at 192.168.1.20:
              host:   deskaudio send --to 192.168.1.20:5004
              host:   deskaudio receive --listen 5006 --as-mic viewer_mic
              viewer: deskaudio talk 192.168.1.10:5006 --listen 5004
            """
    )

    @Argument(help: ArgumentHelp("Send the microphone's AudioFrames to HOST:PORT (or [IPV6]:PORT).", valueName: "HOST:PORT"))
    var host: String

    @Option(help: ArgumentHelp("The UDP port the host's frames arrive on (every address, IPv4 and IPv6).", valueName: "PORT"))
    var listen: UInt16

    @Option(help: ArgumentHelp(
        "Capture this source instead of the default microphone; `deskaudio devices` lists names.", valueName: "NAME"))
    var micDevice: String?

    @Flag(help: "Send the microphone as it is, without echo cancellation.")
    var noEchoCancel = false

    @Option(help: ArgumentHelp(
        "The echo canceller: best (WebRTC's AEC3 where PipeWire's plugin has it, else speexdsp), speexdsp or webrtc-aec3.",
        valueName: "NAME"))
    var echoCanceller = EchoCancellerChoice.best

    @Option(help: ArgumentHelp("The microphone's Opus bitrate, bit/s (6000 to 510000).", valueName: "BPS"))
    var bitrate: Int32 = 64_000

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
        if listen == 0 { throw ValidationError("--listen needs a port from 1 to 65535") }
        if !(6000...510_000).contains(bitrate) { throw ValidationError("--bitrate must be 6000 to 510000") }
        _ = try UDPSocket.split(host)
    }

    func run() throws {
        InterruptSignal.install()
        let incoming = try UDPSocket.listening(on: listen, timeoutMs: 5)
        let outgoing = try UDPSocket.sending(to: host)
        let session: TalkSession
        do throws(DeskAudioError) {
            session = try TalkSession(
                bitrate: bitrate, echoCancel: !noEchoCancel, echoEngine: echoCanceller.engine, backend: backend.backend)
            try session.start(micDevice: micDevice)
        } catch {
            throw CLIFailure(error, doing: "starting the session")
        }
        defer { session.stop() }
        var display = StatusDisplay()
        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { datagram.deallocate() }
        let start = ContinuousClock.now
        var lastShown = -1.0
        while !InterruptSignal.wasRaised {
            if let length = incoming.receive(into: datagram), !session.play(UnsafeRawBufferPointer(rebasing: datagram[..<length])) {
                if session.counts.refused == 1 { display.note(["a datagram that is not a playable AudioFrame: dropped"]) }
            }
            session.sendMicrophone { frame in outgoing.send(frame) }
            let time = ContinuousClock.now - start
            let elapsed = Double(time.components.seconds) + Double(time.components.attoseconds) * 1e-18
            if elapsed - lastShown >= 0.1 {
                lastShown = elapsed
                display.show([session.statusLine], elapsedSeconds: elapsed)
            }
            if let seconds, elapsed >= seconds { break }
        }
        session.stop()
        print(session.summary)
    }
}

/// One viewer's session: the player with its tap, the microphone's capture with its tap, and
/// the encoder that cancels the one out of the other. Every call but `stop` on one thread.
final class TalkSession {
    struct Counts {
        var received: UInt64 = 0, refused: UInt64 = 0, sent: UInt64 = 0, sendFailed: UInt64 = 0
    }

    private let player: FramePlayer
    private let capture = AudioService()
    private let microphone = AudioChunkRing()
    private let encoder: PCMFrameEncoder
    private let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096)
    private let backend: AudioBackend?
    private(set) var counts = Counts()
    private var stopped = false

    init(bitrate: Int32, echoCancel: Bool, echoEngine: EchoEngine?, backend: AudioBackend?) throws(DeskAudioError) {
        player = try FramePlayer(output: .speakers, tapsPlayedAudio: true, onRunning: { _ in })
        encoder = try PCMFrameEncoder(bitrate: bitrate)
        try encoder.setEchoEngine(echoEngine)
        try encoder.setEchoCancel(echoCancel)
        capture.setBackend(backend)
        capture.setChannels(.layout(.stereo))
        capture.setCapturedAudioTap(microphone)
        self.backend = backend
    }

    deinit {
        stop()
        scratch.deallocate()
    }

    /// Puts the player on the speakers and starts the microphone (`micDevice`, or the default).
    func start(micDevice: String?) throws(DeskAudioError) {
        try player.start(backend: backend)
        if let micDevice { try capture.setDevice(micDevice, forMic: true) }
        try capture.enable(mic: true, app: false)
    }

    /// One datagram from the host: played if it is a playable AudioFrame; false if refused.
    func play(_ datagram: UnsafeRawBufferPointer) -> Bool {
        counts.received += 1
        do throws(DeskAudioError) {
            try player.feed(datagram)
            return true
        } catch {
            counts.refused += 1
            return false
        }
    }

    /// What the speakers played since the last call goes to the canceller, then the
    /// microphone's audio since then is cancelled and encoded; `send` gets each frame.
    func sendMicrophone(_ send: (UnsafeRawBufferPointer) -> Bool) {
        guard let played = player.playedAudio else { return }
        played.drain(through: scratch) { chunk, endNs in
            _ = try? encoder.pushPlayback(
                UnsafeRawBufferPointer(chunk), format: .f32, channels: 2, rate: 48_000, endTimeNs: endNs)
        }
        microphone.drain(through: scratch) { chunk, endNs in
            _ = try? encoder.push(UnsafeRawBufferPointer(chunk), format: .f32, channels: 2, rate: 48_000, endTimeNs: endNs) {
                frame in
                if send(frame) { counts.sent += 1 } else { counts.sendFailed += 1 }
            }
        }
    }

    /// Stops the microphone and the player; safe to call twice.
    func stop() {
        guard !stopped else { return }
        stopped = true
        try? capture.enable(mic: false, app: false)
        player.stop()
    }

    var statusLine: String {
        let echo = encoder.counters.echo
        let playing = player.stats.isRunning ? "playing" : "waiting"
        return "received \(counts.received)  sent \(counts.sent)  "
            + (echo.map { "ERLE \(Int($0.echoReturnLossEnhancementDb.rounded())) dB, delay \($0.delayMs.map { "\(Int($0.rounded())) ms" } ?? "not found")" }
                ?? "echo cancellation off")
            + "  \(playing)"
    }

    var summary: String {
        let stats = player.stats
        let encoded = encoder.counters
        let echo = encoded.echo.map {
            "; echo cancelled by \($0.engine == .webrtcAEC3 ? "WebRTC's AEC3" : "speexdsp") in \($0.blocks) blocks (\($0.blocksWithoutPlayback) without the speakers' audio), "
                + "ERLE \(tenths($0.echoReturnLossEnhancementDb)) dB over the last second, delay "
                + ($0.delayMs.map { "\(tenths($0)) ms" } ?? "not found")
        } ?? "; echo cancellation off"
        return "received \(counts.received) packets (\(counts.refused) refused); played \(stats.buffer.framesPlayed), "
            + "concealed \(stats.buffer.framesConcealed); sent \(counts.sent) microphone frames (\(counts.sendFailed) "
            + "refused by the system), \(encoded.framesGated) held by the gate\(echo); "
            + "chunks dropped: speakers \(player.playedAudio?.droppedChunks ?? 0), microphone \(microphone.droppedChunks)"
    }
}

/// `value` rounded to a tenth, for messages.
private func tenths(_ value: Double) -> Double { (value * 10).rounded() / 10 }

/// `--echo-canceller`'s values.
enum EchoCancellerChoice: String, ExpressibleByArgument, CaseIterable {
    case best, speexdsp
    case webrtcAEC3 = "webrtc-aec3"

    /// The engine asked for; nil: the best there is.
    var engine: EchoEngine? {
        switch self {
        case .best: nil
        case .speexdsp: .speexdsp
        case .webrtcAEC3: .webrtcAEC3
        }
    }
}
