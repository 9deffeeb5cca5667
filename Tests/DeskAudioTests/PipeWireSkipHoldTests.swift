import Testing

@testable import DeskAudio

/// The buffer after a skip waits one cycle, and what comes at the same position again says
/// what it was: what a stalled process resuming gets from PipeWire (docs/reliability.md, R-PW-DOUBLE-CALL).
@Suite struct PipeWireSkipHoldTests {
    /// What the hold handed on, in order: "silence N" or "audio FIRST_SAMPLE@TIME".
    final class Record {
        var events: [String] = []
        func take(_ hold: PipeWireSkipHold, first: Float, skipped: Int, position: UInt64, timeNs: UInt64) {
            let samples = [Float](repeating: first, count: 512)  // 256 stereo samples
            samples.withUnsafeBufferPointer { buffer in
                hold.take(
                    buffer, channels: 2, timeNs: timeNs, skipped: skipped, position: position,
                    silence: { self.events.append("silence \($0)") },
                    audio: { self.events.append("audio \(Int($0[0]))@\($1 ?? 0)") })
            }
        }
    }

    @Test func buffersWithoutASkipPassStraightOn() {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 1, skipped: 0, position: 256, timeNs: 1_000)
        record.take(hold, first: 2, skipped: 0, position: 512, timeNs: 2_000)
        #expect(record.events == ["audio 1@1000", "audio 2@2000"])
    }

    /// A true skip: the next cycle comes at a new position; the silence and the held buffer
    /// go on as they were, before the new one.
    @Test func aSkipFollowedByTheNextCycleIsKept() {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 1, skipped: 4608, position: 5120, timeNs: 100_000_000)
        #expect(record.events.isEmpty)
        record.take(hold, first: 2, skipped: 0, position: 5376, timeNs: 105_333_333)
        #expect(record.events == ["silence 4608", "audio 1@100000000", "audio 2@105333333"])
    }

    /// The same position twice, each buffer audio of its own (Debian 12, a stopped process
    /// resuming: 7680 counted; the first buffer went on from the one before it, the second
    /// was the audio 7680 samples later): the first goes before the cycles missed, at the
    /// time right after the buffer before it, and one cycle fewer is silence.
    @Test func twoBuffersAtOnePositionPutTheMissedCyclesBetweenThem() {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 1, skipped: 7680, position: 203_520, timeNs: 4_000_000_000)
        record.take(hold, first: 2, skipped: 0, position: 203_520, timeNs: 4_000_000_000)
        #expect(record.events == ["audio 1@3840000000", "silence 7424", "audio 2@4000000000"])
    }

    /// The same position twice, the second buffer the first again (7168 counted and lost)
    /// or zeros (6656): the skip stands and the second is dropped.
    @Test(arguments: [Float(1), 0])
    func aCopyOrZerosAtThePositionAgainAreDropped(second: Float) {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 1, skipped: 7168, position: 683_520, timeNs: 4_000_000_000)
        record.take(hold, first: second, skipped: 0, position: 683_520, timeNs: 4_000_000_000)
        record.take(hold, first: 3, skipped: 0, position: 683_776, timeNs: 4_005_333_333)
        #expect(record.events == ["silence 7168", "audio 1@4000000000", "audio 3@4005333333"])
    }

    /// Both buffers zeros (512 counted and 256 lost; 256 and 256, twice): one cycle was
    /// missed, and the first buffer stands for it.
    @Test(arguments: [512, 256])
    func twoBuffersOfZerosAtOnePositionAreOneCycleMissed(counted: Int) {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 0, skipped: counted, position: 1_047_296, timeNs: 4_000_000_000)
        record.take(hold, first: 0, skipped: 0, position: 1_047_296, timeNs: 4_000_000_000)
        #expect(record.events == ["audio 0@4000000000"])
    }

    @Test func aBufferLargerThanTheHoldIsNotHeld() {
        let hold = PipeWireSkipHold()
        var events: [String] = []
        let samples = [Float](repeating: 3, count: PipeWireSkipHold.capacityFloats + 2)
        samples.withUnsafeBufferPointer { buffer in
            hold.take(
                buffer, channels: 2, timeNs: 7, skipped: 480, position: 960,
                silence: { events.append("silence \($0)") }, audio: { events.append("audio \($0.count)@\($1 ?? 0)") })
        }
        #expect(events == ["silence 480", "audio \(PipeWireSkipHold.capacityFloats + 2)@7"])
    }
}
