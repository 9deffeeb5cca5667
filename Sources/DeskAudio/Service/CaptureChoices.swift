/// What the host chose for a capture, kept while sources are off: the devices by role, the
/// applications, the host mute, per-application levels and the channel layout. One owner
/// (`CaptureControl`, under its lock); `appSelection` is the one place they are merged.
struct CaptureChoices {
    /// The device asked for by role (none: the default, followed when it changes).
    var devices: [CaptureSource.Role: String] = [:]
    /// The applications app audio records (nil: a sink's monitor).
    var apps: AppSelection?
    /// Whether what app audio records is kept off the host's speakers.
    var mutesHost = false
    /// Whether app audio measures each recorded application's level.
    var measuresAppLevels = false
    /// The channels of the frames: a layout or the sink's own.
    var channels = ChannelChoice.layout(.stereo)
    /// How 5.1 and 7.1 are split into Opus streams.
    var surroundStreams = OpusFrameEncoder.SurroundStreams.coupled
    /// The quantum PipeWire streams ask the graph for, in samples per channel (nil: the
    /// frame's block).
    var pipeWireQuantum: Int?

    /// What app audio records: the applications chosen with the mute and the level choice
    /// applied; with no applications chosen, every application while the host is muted,
    /// else nil (a sink's monitor).
    var appSelection: AppSelection? {
        guard var selection = apps else {
            return mutesHost ? .everyApp(mutesHost: true, measuresLevels: measuresAppLevels) : nil
        }
        selection.mutesHost = selection.mutesHost || mutesHost
        selection.measuresLevels = selection.measuresLevels || measuresAppLevels
        return selection
    }
}
