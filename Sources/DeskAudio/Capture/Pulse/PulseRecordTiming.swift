import CPulse
import Glibc

/// When the samples of a record stream on plain PulseAudio sounded, from the server's own
/// account: asked with `pa_stream_update_timing_info`, the server takes a snapshot in the
/// device's thread (how far the stream is written, what is on its way to the client, the
/// source's latency and, for a monitor, its sink's) and stamps it with its clock. A sink
/// renders ahead of playing by up to its latency and hands its monitor each block as it
/// renders it, so the sample the stream was written up to (`write_index`) sounds at the
/// stamp plus the sink's latency, less what is still on its way (`source_usec`, which for a
/// microphone holds the source's latency too: that much earlier it was captured). Unlike
/// an arrival, this does not move with when the server's or the library's threads ran, nor
/// with a sink latency that changed since it was last asked (both made capture times off by
/// up to 5 ms, docs/capture.md). The stamp is taken after the snapshot, up to the round
/// trip later, so an answer that took longer than `TimingPolicy.standard.pulseLongestRoundTripNs` is not taken.
/// pipewire-pulse hands a monitor each cycle as it is played, and its capture times stay
/// worked back from arrivals (this way was not measured there). Main loop thread only (or
/// its lock held).
final class PulseRecordTiming {

    private let channels: Int
    private let onFirstMark: (OpaquePointer?) -> Void
    private var askedAtNs: UInt64 = 0
    private var takenAtNs: UInt64?
    private var asking = false
    // The last answer taken, until `takeMark()` hands it on.
    private var mark: ClockEstimator.Line?

    /// Timing for a stream of `channels` 32-bit float channels; `onFirstMark` runs (on the
    /// main loop thread, with the stream answered for) when the first answer is taken, so
    /// reads held back for it can go.
    init(channels: Int, onFirstMark: @escaping (OpaquePointer?) -> Void = { _ in }) {
        self.channels = max(channels, 1)
        self.onFirstMark = onFirstMark
    }

    /// True once an answer was taken: the stream's samples can be placed.
    var hasMarked: Bool { takenAtNs != nil }

    /// At a read of `stream`: asks the server, unless a question is on its way or an answer
    /// was taken less than `TimingPolicy.standard.pulseSnapshotIntervalNs` ago.
    func refresh(stream: OpaquePointer?, nowNs: UInt64) {
        guard !asking, takenAtNs.map({ nowNs &- $0 >= TimingPolicy.standard.pulseSnapshotIntervalNs }) ?? true else { return }
        askedAtNs = nowNs
        guard
            let operation = pulse.pa_stream_update_timing_info(
                stream,
                { stream, success, userData in
                    Unmanaged<PulseRecordTiming>.fromOpaque(userData!).takeUnretainedValue().answered(
                        stream, success: success != 0)
                }, Unmanaged.passUnretained(self).toOpaque())
        else { return }
        asking = true
        pulse.pa_operation_unref(operation)
    }

    /// The newest mark not handed on yet, or nil: a stream position (samples per channel
    /// since the stream started), the CLOCK_MONOTONIC time that sample sounded, and the
    /// nominal length of a sample to place the samples near it.
    func takeMark() -> ClockEstimator.Line? {
        defer { mark = nil }
        return mark
    }

    /// The mark a snapshot `info` of a stream of `channels` float channels gives, its stamp
    /// (the server's wall clock) moved onto CLOCK_MONOTONIC by `wallClockOffsetNs` (the wall
    /// clock less CLOCK_MONOTONIC): the sample the stream was written up to sounded at the
    /// stamp plus the monitored sink's latency less the source's latency and what is on its
    /// way.
    static func mark(of info: pa_timing_info, channels: Int, wallClockOffsetNs: Double) -> ClockEstimator.Line {
        let stampNs = Double(info.timestamp.tv_sec) * 1e9 + Double(info.timestamp.tv_usec) * 1e3 - wallClockOffsetNs
        return ClockEstimator.Line(
            position: info.write_index / Int64(max(channels, 1) * MemoryLayout<Float>.size),
            timeNs: stampNs + (Double(info.sink_usec) - Double(info.source_usec)) * 1e3,
            nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample)
    }

    private func answered(_ stream: OpaquePointer?, success: Bool) {
        asking = false
        let nowNs = LibraryClock.system.nowNs()
        guard success, nowNs &- askedAtNs <= TimingPolicy.standard.pulseLongestRoundTripNs,
            let info = pulse.pa_stream_get_timing_info(stream)?.pointee, info.write_index_corrupt == 0
        else { return }
        var wall = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        mark = Self.mark(
            of: info, channels: channels,
            wallClockOffsetNs: Double(wall.tv_sec) * 1e9 + Double(wall.tv_nsec) - Double(nowNs))
        let first = takenAtNs == nil
        takenAtNs = nowNs
        if first { onFirstMark(stream) }
    }
}
