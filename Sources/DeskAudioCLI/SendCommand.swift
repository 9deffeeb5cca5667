import ArgumentParser
import DeskAudio
import Synchronization

/// `deskaudio send`: this machine's sound, as a host would send it, over UDP to a `receive`.
struct SendCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Capture app audio and/or the microphone and send the AudioFrames over UDP, until Ctrl-C or --seconds.",
        discussion: """
            One AudioFrame per datagram, exactly the bytes a host's frame callback gets (10 ms \
            of 48 kHz stereo Opus, zero gate: nothing is sent through long silence). No \
            encryption and no retransmission: for trying the whole path between two machines \
            on a network you trust. `deskaudio receive` on the other machine plays it.

            Examples:
              deskaudio send --to 192.168.1.20:5004              # what this machine plays
              deskaudio send --to viewer.lan:5004 --app --mic
              deskaudio send --to [fd00::20]:5004 --only firefox
            """
    )

    @Option(help: ArgumentHelp("Where to send: HOST:PORT (or [IPV6]:PORT).", valueName: "HOST:PORT"))
    var to: String

    @OptionGroup var capture: CaptureOptions

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
        _ = try UDPSocket.split(to)
    }

    func run() throws {
        InterruptSignal.install()
        let socket = try UDPSocket.sending(to: to)
        let counts = SendCounts()
        let service = AudioService()
        service.setFrameHandler { frame in counts.add(frame.count, sent: socket.send(frame)) }
        try capture.start(service)
        var monitor = CaptureMonitor(service: service)
        monitor.show(until: seconds) { monitor in
            ["sent \(counts.frames.load(ordering: .relaxed)) frames  \(counts.bytes.load(ordering: .relaxed)) bytes  "
                + monitor.sourcesAndGate]
        }
        try? service.enable(mic: false, app: false)
        service.setFrameHandler(nil)
        let failed = counts.failed.load(ordering: .relaxed)
        print(
            "sent \(counts.frames.load(ordering: .relaxed)) frames, \(counts.bytes.load(ordering: .relaxed)) bytes to \(to)"
                + (failed > 0 ? "; \(failed) refused by the system" : ""))
    }
}

/// What `send` has sent, counted on the library's delivery thread.
private final class SendCounts: Sendable {
    let frames = Atomic<UInt64>(0)
    let bytes = Atomic<UInt64>(0)
    let failed = Atomic<UInt64>(0)

    func add(_ count: Int, sent: Bool) {
        guard sent else {
            failed.add(1, ordering: .relaxed)
            return
        }
        frames.add(1, ordering: .relaxed)
        bytes.add(UInt64(count), ordering: .relaxed)
    }
}
