import ArgumentParser
import DeskAudio

/// `deskaudio receive`: AudioFrames from a `send` (or a host) over UDP, played on this
/// machine's speakers or exposed as a microphone.
struct ReceiveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receive",
        abstract: "Play AudioFrames that arrive over UDP on the default sink, or as a microphone, until Ctrl-C or --seconds.",
        discussion: """
            Frames go through the library's jitter buffer (adaptive delay, loss concealed, the \
            sender's silence played as silence). With --as-mic NAME they become a microphone \
            applications can record from (PipeWire or PulseAudio), as deskaudio_remote_mic does for a host. \
            The status line shows packets, loss, concealment, the jitter buffer's delay and \
            the level played; at the end, the delay from arrival to playback (p50/p99).

            Examples:
              deskaudio receive --listen 5004                  # on the speakers
              deskaudio receive --listen 5004 --as-mic viewer_mic
              pw-record --target viewer_mic call.wav           # an application recording it
            """
    )

    @Option(help: ArgumentHelp("The UDP port to receive on (every address, IPv4 and IPv6).", valueName: "PORT"))
    var listen: UInt16

    @Option(help: ArgumentHelp(
        "Expose the frames as a microphone with this node name (letters, digits, _ - .) instead of playing them.",
        valueName: "NAME"))
    var asMic: String?

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
        if listen == 0 { throw ValidationError("--listen needs a port from 1 to 65535") }
    }

    func run() throws {
        InterruptSignal.install()
        let socket = try UDPSocket.listening(on: listen, timeoutMs: 50)
        let output: FramePlayer.Output = asMic.map { .microphone(name: $0, description: "DeskAudio: \($0)") } ?? .speakers
        let player: FramePlayer
        do throws(DeskAudioError) {
            player = try FramePlayer(output: output, onRunning: { _ in })
            try player.start()
        } catch {
            throw CLIFailure(error, doing: asMic == nil ? "opening the default sink" : "creating the microphone")
        }
        defer { player.stop() }
        let start = ContinuousClock.now
        var elapsed: Double {
            let time = ContinuousClock.now - start
            return Double(time.components.seconds) + Double(time.components.attoseconds) * 1e-18
        }
        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
        defer { datagram.deallocate() }
        var packets: UInt64 = 0
        var refused: UInt64 = 0
        var sequences = SequenceCount()
        var display = StatusDisplay()
        var lastShown = -1.0
        while !InterruptSignal.wasRaised {
            if let length = socket.receive(into: datagram) {
                packets += 1
                let bytes = UnsafeRawBufferPointer(rebasing: datagram[..<length])
                do throws(DeskAudioError) {
                    try player.feed(bytes)
                    sequences.note(try JitterBuffer.playableFrame(bytes).header.sequence)
                } catch {
                    refused += 1
                    if refused == 1 { display.note(["a datagram that is not a playable AudioFrame: \(error.message)"]) }
                }
            }
            let now = elapsed
            if now - lastShown >= 0.1 {
                lastShown = now
                display.show([statusLine(player.stats, packets: packets, lost: sequences.lost)], elapsedSeconds: now)
            }
            if let seconds, now >= seconds { break }
        }
        let stats = player.stats
        let buffer = stats.buffer
        print(
            "received \(packets) packets (\(refused) refused), lost \(sequences.lost); played \(buffer.framesPlayed), "
                + "concealed \(buffer.framesConcealed), late \(buffer.framesLate), inserted \(buffer.framesInserted), "
                + "dropped \(buffer.framesDropped), gaps \(buffer.gaps); delay p50 \(stats.delayP50Ms) ms, "
                + "p99 \(stats.delayP99Ms) ms; target \(stats.targetDelayMs) ms")
    }

    private func statusLine(_ stats: FramePlayer.Stats, packets: UInt64, lost: UInt64) -> String {
        let percent = packets + lost > 0 ? Double(lost) * 100 / Double(packets + lost) : 0
        let level = CaptureMonitor.decibels(LevelMeter.dBFS(stats.peak))
        return "packets \(packets)  lost \(lost) (\(Double((percent * 10).rounded()) / 10) %)  "
            + "concealed \(stats.buffer.framesConcealed)  delay \(stats.targetDelayMs) ms  peak \(level)  "
            + (stats.isRunning ? (asMic == nil ? "playing" : "recorded") : (asMic == nil ? "waiting" : "not recorded"))
    }
}
