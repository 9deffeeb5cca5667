/// A snapshot of the capture service's counts and measurements. Counts run from the
/// service's creation, through stops and restarts.
public struct CaptureStats: Sendable, Equatable {
    /// One source's level over the last second and the latency its server reports.
    public struct SourceLevel: Sendable, Equatable {
        /// Highest sample magnitude, dBFS (−120 for silence).
        public var peakDBFS: Float
        /// Root mean square, dBFS (a full-scale sine is −3; −120 for silence).
        public var rmsDBFS: Float
        /// Delay from the device to the stream, as the server reports it; nil before a report.
        public var serverLatencyNs: Int64?
    }

    /// 10 ms frames cut from captured audio.
    public var framesCaptured: UInt64 = 0
    /// Frames encoded and handed to the host.
    public var framesSent: UInt64 = 0
    /// Frames held back by the zero gate.
    public var framesGated: UInt64 = 0
    /// Frames' worth of captured audio dropped because the worker fell more than its ring
    /// (0.5 s) behind the audio server (a starved machine).
    public var framesDroppedOverflow: UInt64 = 0
    /// Encoded frames dropped, oldest first, because the frame handler fell more than
    /// 0.5 s (FrameQueue.capacity frames of 10 ms) behind; the next frame delivered carries the
    /// after-loss flag.
    public var framesDroppedSlowCallback: UInt64 = 0
    /// 10 ms frames' worth of audio the server's graph moved past without a capture stream,
    /// whose thread was not run in time (a starved machine), each time rounded up; queued as
    /// silence in its place.
    public var framesSkippedByServer: UInt64 = 0
    /// Graph cycles of exact zeros a capture stream got alone between two cycles of sound, one
    /// cycle or a run of at most `TimingPolicy.serverZeroRunLongestSamples` (PipeWire's native
    /// API): a short pause in the sound, or the server's own (on PipeWire 0.3.65 one consumer
    /// of a monitor gets such a run now and then, with nothing lost, the audio after it later
    /// than its times say). Passed on as they came, and counted so a short silence can be told
    /// to be the server's.
    public var serverZeroCycles: UInt64 = 0
    /// Frames' worth of a source's audio dropped because it arrived as a backlog after its
    /// time had been filled with silence in the mix (app + mic, or the chosen applications'
    /// streams through the PulseAudio API).
    public var framesDroppedLate: UInt64 = 0
    /// Frames lost because the encoder failed on them.
    public var framesDroppedEncoder: UInt64 = 0
    /// Frames' worth of a lagging source that the mix filled with silence (app + mic, or the
    /// chosen applications' streams through the PulseAudio API).
    public var framesSilenceFilled: UInt64 = 0
    /// AudioFrame bytes handed to the host.
    public var bytesSent: UInt64 = 0
    /// Bits per second the encoder uses now.
    public var bitrate: Int32 = 0
    /// The backend capture uses now; nil while stopped.
    public var backend: AudioBackend?
    /// App audio's level; nil while it is not captured.
    public var app: SourceLevel?
    /// The microphone's level; nil while it is not captured.
    public var mic: SourceLevel?
    /// Mean time, over the last second's frames, from the arrival of the buffer that
    /// completed a frame to the start of the frame callback.
    public var callbackLatencyMeanNs: UInt64 = 0
    /// Longest such time over the last second's frames.
    public var callbackLatencyMaxNs: UInt64 = 0

    /// An all-zero snapshot.
    public init() {}
}
