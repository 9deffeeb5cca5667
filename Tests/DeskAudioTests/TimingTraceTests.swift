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
}
