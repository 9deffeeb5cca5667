/// How a backend opens a capture stream, beyond its target.
struct StreamOptions: Sendable, Equatable {
    /// The stream stalled again right after a reopen, so the session manager is not linking
    /// it: a backend that can links the device itself (PipeWire), the others open it as usual.
    var linkingItself = false
    /// For app audio: when the server has no sink at all (a machine with no sound card),
    /// create a virtual one for as long as the stream runs, so applications have somewhere
    /// to play and the capture hears them.
    var ensuresSink = false
}
