import ArgumentParser
import DeskAudioC

/// `deskaudio`: try and debug audio capture on this machine with the library itself.
@main
struct DeskAudioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "deskaudio",
        abstract: "Capture this machine's audio with DeskAudio: list devices, record, watch levels, send and receive.",
        discussion: """
            Captures through PipeWire or PulseAudio (also pipewire-pulse), as a remote-desktop \
            host linking libdeskaudio.so would: 48 kHz stereo, 10 ms Opus frames, zero gate.

            Examples:
              deskaudio devices                       # defaults marked with *
              deskaudio record --seconds 10 out.opus  # what the machine plays
              deskaudio record --app --mic call.opus  # both, until Ctrl-C
              deskaudio record --device NAME out.opus # a sink's monitor or a source
              deskaudio meter --app --mic             # live levels, gate state
              deskaudio devices --backend pulse       # the PulseAudio API
              deskaudio apps                          # applications playing now
              deskaudio record --only firefox f.opus  # one application only
              deskaudio send --to viewer.lan:5004     # stream to another machine...
              deskaudio receive --listen 5004         # ...which plays it
              deskaudio serve --web 8080              # play it in a browser: http://127.0.0.1:8080/
            """,
        version: String(cString: deskaudio_version()!),
        subcommands: [
            DevicesCommand.self, AppsCommand.self, RecordCommand.self, MeterCommand.self, SendCommand.self,
            ReceiveCommand.self, TalkCommand.self, ServeCommand.self, DoctorCommand.self,
        ]
    )
}
