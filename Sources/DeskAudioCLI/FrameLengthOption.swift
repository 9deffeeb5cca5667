import ArgumentParser
import DeskAudio

/// `--frame-ms`, shared by `record`, `send` and `serve`: how long each frame is.
struct FrameLengthOption: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Frame length in milliseconds: 2.5, 5, 10 (the default) or 20. The zero gate closes after 800 frames "
            + "of silence: 2, 4, 8 or 16 s.", valueName: "MS"))
    var frameMs: Double = 10

    /// The frame length --frame-ms names (validated before a command runs).
    var duration: FrameDuration { FrameDuration(milliseconds: frameMs) ?? .ms10 }

    func validate() throws {
        if FrameDuration(milliseconds: frameMs) == nil { throw ValidationError("--frame-ms must be 2.5, 5, 10 or 20") }
    }
}
