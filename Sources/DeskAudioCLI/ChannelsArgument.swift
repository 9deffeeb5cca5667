import ArgumentParser
import DeskAudio

/// `--channels`, as `record` and `serve` take it: 1, 2, 6 (5.1), 8 (7.1) or sink.
enum ChannelsArgument {
    /// The option's help.
    static let help = ArgumentHelp(
        "Channels: 1, 2 (the default), 6 (5.1), 8 (7.1), or sink for the layout of the sink recorded.",
        valueName: "N")

    /// The error for a value that is none of those.
    static let invalid = ValidationError("--channels must be 1, 2, 6, 8 or sink")

    /// The channel choice `text` names, or nil.
    static func choice(_ text: String) -> ChannelChoice? {
        if text == "sink" { return .sinkLayout }
        return Int(text).flatMap(ChannelLayout.init(channels:)).map { .layout($0) }
    }
}
