import CPulse
import Testing

@testable import DeskAudio

/// A plain PulseAudio record stream's timing snapshot read as a mark: which sample it names
/// and when that sample sounded (`PulseRecordTiming.mark(of:channels:wallClockOffsetNs:)`).
@Suite struct PulseRecordTimingTests {
    /// A snapshot stamped 1 000.000 200 s on the wall clock, the stream written up to
    /// `writtenBytes`, with the given latencies.
    static func snapshot(writtenBytes: Int64, sinkUsec: UInt64, sourceUsec: UInt64) -> pa_timing_info {
        var info = pa_timing_info()
        info.timestamp = timeval(tv_sec: 1_000, tv_usec: 200)
        info.write_index = writtenBytes
        info.sink_usec = sinkUsec
        info.source_usec = sourceUsec
        return info
    }

    /// A monitor: its sink renders ahead, so the newest sample sounds the sink's latency after
    /// the stamp, less what was still on its way to the stream; the stamp moves onto
    /// CLOCK_MONOTONIC by the clocks' offset.
    @Test func aMonitorsNewestSampleSoundsTheSinksLatencyAfterTheStamp() {
        let info = Self.snapshot(writtenBytes: 48_000 * 8, sinkUsec: 5_000, sourceUsec: 1_000)
        let mark = PulseRecordTiming.mark(of: info, channels: 2, wallClockOffsetNs: 900e9)
        #expect(mark.position == 48_000)
        #expect(mark.timeNs == 100e9 + 200e3 + 4_000e3)
    }

    /// A microphone: no sink, so the newest sample was captured the source's latency (and
    /// what was on its way) before the stamp; positions count samples per channel.
    @Test func aMicrophonesNewestSampleWasCapturedTheSourcesLatencyBeforeTheStamp() {
        let info = Self.snapshot(writtenBytes: 6 * 4 * 480, sinkUsec: 0, sourceUsec: 12_500)
        let mark = PulseRecordTiming.mark(of: info, channels: 6, wallClockOffsetNs: 0)
        #expect(mark.position == 480)
        #expect(mark.timeNs == 1_000e9 + 200e3 - 12_500e3)
    }
}
