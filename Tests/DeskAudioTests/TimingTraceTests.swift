import Foundation
import TestSupport
import Testing

@testable import DeskAudio

/// What `TimingTrace` writes: a stream longer than its storage keeps its end.
@Suite struct TimingTraceTests {
    /// The last `capacity` records, marked with where they begin, from a read on (a fragment
    /// without its read is left out), then the stream's counts.
    @Test func aStreamLongerThanTheStorageKeepsItsLastRecordsFromARead() throws {
        let directory = try TemporaryDirectory(prefix: "deskaudio-trace")
        let file = directory.appendingPathComponent("trace.txt").path
        let feed = SourceFeed(notices: NoticeBoard(driving: .stepped))
        let trace = TimingTrace(path: file, header: "# deskaudio timing trace 1\nstream pipewire-pulse\n", feed: feed)
        let total = TimingTrace.capacity + 3
        for index in 0..<total {
            if index.isMultiple(of: 2) {
                trace.note(.arrivalRead(nowNs: UInt64(index), readable: 8, timing: nil))
            } else {
                trace.note(.fragment(floats: 2, checksum: UInt64(index), zero: false, hole: false))
            }
        }
        trace.finish(feed: feed)
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
        #expect(lines[2] == "# from record 3")
        #expect(lines[3] == "pp now=4 readable=8 timing=-", "record 3, a fragment, left out")
        #expect(lines.last == "end skipped=0 zero-cycles=0")
        #expect(lines.count == 3 + (total - 4) + 1)
        #expect(lines[lines.count - 2] == "pp now=\(total - 1) readable=8 timing=-")
    }

    /// A trace read back (TraceLine): the runs of zero buffers between the first and last
    /// buffer of sound, each with whether the graph's position went on a quantum a buffer.
    @Test func zeroRunsInsideTheSoundAreFoundWithWhetherThePositionBroke() {
        let zeros: [(ticks: Int, zero: Int)] = [
            (0, 1), (256, 0), (512, 1), (768, 1), (1024, 1), (1280, 0), (1536, 1), (1792, 0),
            (2048, 1), (2304, 1), (3072, 1), (3328, 0), (3584, 1), (3840, 1),
        ]
        let text = "# deskaudio timing trace 1\nstream pipewire channels=2\n"
            + zeros.map { "pw now=0 delay=0 ticks=\($0.ticks) rate=1/48000 dur=256 n=256 sum=0 zero=\($0.zero)\n" }.joined()
            + "end skipped=0 zero-cycles=0\n"
        #expect(
            TraceLine.zeroRunsInsideTheSound(of: text, atLeast: 2) == [
                "records 2-4 (3), ticks 512-1024, no break", "records 8-10 (3), ticks 2048-3072, broken",
            ])
        #expect(TraceLine.zeroRunsInsideTheSound(of: text, atLeast: 4).isEmpty)
    }
}
