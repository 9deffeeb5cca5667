import Testing

@testable import DeskAudio

/// The buffer after a skip waits one cycle, and a repeated position takes a cycle off the
/// skip: what a stalled process resuming gets from PipeWire (docs/reliability.md).
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

    /// The same position twice (Debian 12 run: 4864 samples counted, 4608 lost): one cycle
    /// less silence, and the held audio is a cycle older than its call said.
    @Test func aRepeatedPositionTakesACycleOffTheSkip() {
        let hold = PipeWireSkipHold()
        let record = Record()
        record.take(hold, first: 1, skipped: 4864, position: 57_088, timeNs: 100_000_000)
        record.take(hold, first: 2, skipped: 0, position: 57_088, timeNs: 100_000_000)
        #expect(record.events == ["silence 4608", "audio 1@94666667", "audio 2@100000000"])
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
