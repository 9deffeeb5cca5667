import ArgumentParser
import DeskAudio

/// `deskaudio apps`: the applications playing now, with what `--only`/`--exclude` match on.
struct AppsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "List the streams applications play now: name, binary, pid, stream id, whether sound flows.",
        discussion: """
            `record --only APP` and `--exclude APP` match any of the name, the binary, the node \
            name (ignoring case) or the pid.

            Examples:
              deskaudio apps
              deskaudio record --only firefox --seconds 10 firefox.opus
              deskaudio record --exclude zoom call-free.opus
            """
    )

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    func run() throws {
        let service = AudioService()
        service.setBackend(backend.backend)
        let streams: [PlaybackStream]
        do throws(DeskAudioError) {
            streams = try service.playbackStreams()
        } catch {
            throw CLIFailure(error, doing: "listing applications")
        }
        if streams.isEmpty { print("no application is playing") }
        for stream in streams {
            let name = stream.applicationName.isEmpty ? "(no name)" : stream.applicationName
            print(
                "\(stream.isRunning ? "▶" : " ") \(name)  binary=\(stream.binary.isEmpty ? "?" : stream.binary)"
                    + "  pid=\(stream.processID)  node=\(stream.nodeName)  stream=\(stream.id)")
        }
    }
}
