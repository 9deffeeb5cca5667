/// Where a `FramePlayer`'s audio goes on one audio server: a stream made on `start` whose
/// real-time side asks the player for exactly the samples it needs, and reports when it
/// starts and stops running. Gone with `stop` (safe to call twice).
protocol FrameOutput: AnyObject {
    /// Connects and puts the output on the server; returns once the server has it. Throws
    /// `.noServer` when that kind of server does not answer.
    func start(timeoutMs: Int) throws(DeskAudioError)
    /// Takes the output off the server; no call to the player after it returns.
    func stop()
}

/// What an output's real-time side asks its player for: fill `output` (interleaved stereo),
/// whose first sample leaves the speakers, or reaches the recording application, at
/// `playsAtNs` (CLOCK_MONOTONIC; the server's estimate).
typealias RenderRequest = (_ output: UnsafeMutableBufferPointer<Float>, _ playsAtNs: UInt64) -> Void
