import ArgumentParser
import DeskAudio
import Glibc

/// `deskaudio serve --web PORT`: this machine's sound, played in any browser that opens the page.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Capture like `record` and serve the web player and the AudioFrames to browsers, until Ctrl-C or --seconds.",
        discussion: """
            Serves, on one port, the web player's page (http://ADDR:PORT/) and the frames over \
            a WebSocket (ws://ADDR:PORT/frames, one AudioFrame per binary message). Every \
            browser that opens the page hears the capture; a slow or stalled one has frames \
            dropped (counted per client) and never holds up the others. No encryption and no \
            authentication: it listens on 127.0.0.1 unless --bind says otherwise; put it behind \
            an HTTPS proxy before exposing it. docs/web-player.md has the player's API.

            With --remote-mic NAME the page offers a microphone button: what a browser's \
            microphone hears comes back on the same WebSocket and plays into a microphone \
            named NAME on this machine, which applications record from. It is made when a \
            browser first sends and removed when that browser leaves. One browser at a time: \
            the first to send holds it until it leaves or is quiet for 2 s; frames from \
            others, frames that are not 10 ms AudioFrames and frames faster than real time \
            (past a 1 s burst) are refused and counted per client.

            Examples:
              deskaudio serve --web 8080                    # open http://127.0.0.1:8080/
              deskaudio serve --web 8080 --bind 0.0.0.0 --app --mic
              deskaudio serve --web 8080 --only firefox
              deskaudio serve --web 8080 --remote-mic viewer_mic   # and: pw-record --target viewer_mic
            """
    )

    @Option(help: ArgumentHelp("Serve the web player and the frames on this TCP port (0: any free one).", valueName: "PORT"))
    var web: Int

    @Option(help: ArgumentHelp("The address to listen on (default: 127.0.0.1, this machine only).", valueName: "ADDR"))
    var bind = "127.0.0.1"

    @Option(help: ArgumentHelp("Serve the player from this folder (default: the installed one).", valueName: "DIR"))
    var webRoot: String?

    @Option(help: ArgumentHelp("Browsers served at once at most; more get 503.", valueName: "N"))
    var maxClients = 16

    @Option(help: ArgumentHelp(
        "Take the browsers' microphone into a microphone of this node name (letters, digits, _ - .) on this machine.",
        valueName: "NAME"))
    var remoteMic: String?

    @OptionGroup var capture: CaptureOptions

    @Option(help: ChannelsArgument.help)
    var channels = "2"

    @OptionGroup var frame: FrameLengthOption

    @Option(help: ArgumentHelp(
        "Frames sent to a browser in one write (default 1: each as soon as it is encoded). Each one more "
            + "saves CPU (a wake-up and a socket write per batch) and adds a frame's length to the latency.",
        valueName: "N"))
    var framesPerSend = 1

    @Option(help: ArgumentHelp("Stop after this many seconds (default: at Ctrl-C).", valueName: "N"))
    var seconds: Double?

    func validate() throws {
        if !(0...65535).contains(web) { throw ValidationError("--web takes a port from 0 to 65535") }
        if !(1...1024).contains(maxClients) { throw ValidationError("--max-clients takes 1 to 1024") }
        if !(1...10).contains(framesPerSend) { throw ValidationError("--frames-per-send takes 1 to 10") }
        if ChannelsArgument.choice(channels) == nil { throw ChannelsArgument.invalid }
        if let seconds, !(seconds > 0) { throw ValidationError("--seconds must be more than 0") }
        if let remoteMic {
            do throws(DeskAudioError) { _ = try BrowserMicrophone(name: remoteMic) } catch {
                throw ValidationError("--remote-mic: \(error.message)")
            }
        }
    }

    func run() throws {
        InterruptSignal.install()
        let assets = try WebAssets.load(from: webRoot)
        let microphone = try remoteMic.map { name throws(CLIFailure) in
            do throws(DeskAudioError) { return try BrowserMicrophone(name: name) } catch {
                throw CLIFailure(error, doing: "taking --remote-mic")
            }
        }
        let server = try WebServer(
            host: bind, port: web, assets: assets, maxClients: maxClients, framesPerSend: framesPerSend,
            frameDuration: frame.duration, microphone: microphone)
        defer { server.stop() }
        let clients = server.clients
        let url = "\(server.address.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? bind):\(server.address.port ?? web)"
        print("serving http://\(url)/ (frames on ws://\(url)/frames), the player from \(assets.root)")
        fflush(nil)  // the address line now, even into a pipe
        let service = AudioService()
        service.settings.setFrameDuration(frame.duration)
        service.setChannels(ChannelsArgument.choice(channels) ?? .layout(.stereo))
        service.setFrameHandler { frame in clients.broadcast(frame) }
        try capture.start(service)
        var monitor = CaptureMonitor(service: service)
        monitor.show(until: seconds) { monitor in
            var line = "clients \(clients.connected.count)  " + monitor.sourcesAndGate
            let dropped = clients.framesDroppedForAll
            if dropped > 0 { line += "  dropped for all \(dropped)" }
            let skipped = monitor.stats.framesSkippedByServer
            if skipped > 0 { line += "  skipped by the server \(skipped)" }
            let zeroCycles = monitor.stats.serverZeroCycles
            if zeroCycles > 0 { line += "  zero cycles from the server \(zeroCycles)" }
            return [line] + (microphone.map { [$0.status] } ?? []) + clients.connected.map(Self.describe)
        }
        try? service.enable(mic: false, app: false)
        service.setFrameHandler(nil)
        // Audio lost before it reached the library (its threads were not run in time).
        let final = service.stats()
        let skipped = final.framesSkippedByServer
        if skipped > 0 { print("\(skipped) frames' worth skipped by the server (played as silence)") }
        let zeroCycles = final.serverZeroCycles
        if zeroCycles > 0 { print("\(zeroCycles) graph cycles of zeros alone inside the sound (passed on as they came)") }
        if let microphone { print(microphone.status) }
        for client in clients.all { print(Self.describe(client)) }
        if clients.framesDroppedForAll > 0 {
            print("dropped for every client (the server fell behind): \(clients.framesDroppedForAll) frames")
        }
    }

    private static func describe(_ client: WebClients.Client) -> String {
        "client \(client.id) \(client.address): sent \(client.framesSent) dropped \(client.framesDropped)"
            + (client.microphoneCounts.line.map { "  \($0)" } ?? "")
            + (client.report.map { "  player \($0)" } ?? "")
    }
}
