/// How a backend opens a capture stream, beyond its target.
struct StreamOptions: Sendable, Equatable {
    /// The stream stalled again right after a reopen, so the session manager is not linking
    /// it: a backend that can links the device itself (PipeWire), the others open it as usual.
    var linkingItself = false
    /// For app audio: when the server has no sink at all (a machine with no sound card),
    /// create a virtual one for as long as the stream runs, so applications have somewhere
    /// to play and the capture hears them.
    var ensuresSink = false
    /// Samples per channel (at 48 kHz) the server is asked to hand over at a time: its
    /// quantum on PipeWire, the fragment on PulseAudio. The service asks for the frame
    /// length within 5–10 ms: short frames are not held up by long blocks, and 2.5 ms frames
    /// do not make the whole server graph (every application's stream) wake 400 times a second.
    var periodSamples = FrameDuration.ms10.samples
    /// On PipeWire (natively or through pipewire-pulse): the quantum the stream asks the graph
    /// for instead (nil: `periodSamples`).
    /// The graph runs at the smallest any of its streams asks, so every application wakes
    /// that often.
    var pipeWireQuantum: Int?
    /// The channels the stream asks the server for, in the layout's order (the server
    /// up- or downmixes from what the device has).
    var layout = ChannelLayout.stereo
}
