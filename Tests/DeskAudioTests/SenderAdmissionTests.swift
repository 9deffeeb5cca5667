import DeskAudio
import Testing

/// One voice at a time, at real time: exact verdicts on a virtual clock.
@Suite struct SenderAdmissionTests {
    static let frameNs: UInt64 = 10_000_000

    @Test func theFirstSenderHoldsAndOthersAreRefusedWhileItSends() {
        var admission = SenderAdmission()
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 1_000) == .acceptedNewSender)
        #expect(admission.holder == 1)
        for tick in 1...300 {  // 3 s of steady frames from 1, and 2 trying all along
            let now = 1_000 + UInt64(tick) * Self.frameNs
            #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: now) == .accepted)
            #expect(admission.admit(from: 2, audioNs: Self.frameNs, nowNs: now) == .anotherSender)
        }
    }

    @Test func theHoldersQuietForTheIdleTimeLetsAnotherTakeOver() {
        var admission = SenderAdmission()
        let idle = admission.policy.idleReleaseNs
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 0) == .acceptedNewSender)
        #expect(admission.admit(from: 2, audioNs: Self.frameNs, nowNs: idle - 1) == .anotherSender)
        #expect(admission.admit(from: 2, audioNs: Self.frameNs, nowNs: idle) == .acceptedNewSender)
        #expect(admission.holder == 2)
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: idle + 1) == .anotherSender)
    }

    @Test func aHolderThatLeavesLetsTheNextSenderInAtOnce() {
        var admission = SenderAdmission()
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 0) == .acceptedNewSender)
        admission.leave(2)  // not the holder: nothing changes
        #expect(admission.admit(from: 2, audioNs: Self.frameNs, nowNs: 1) == .anotherSender)
        admission.leave(1)
        #expect(admission.holder == nil)
        #expect(admission.admit(from: 2, audioNs: Self.frameNs, nowNs: 2) == .acceptedNewSender)
    }

    @Test func aBurstOfOneSecondIsTakenAndTheRestRefusedAsTooFast() {
        var admission = SenderAdmission()
        var verdicts: [SenderAdmission.Verdict] = []
        for _ in 0..<150 { verdicts.append(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 5_000)) }
        #expect(verdicts.first == .acceptedNewSender)
        #expect(verdicts.filter { $0 == .accepted }.count == 99)  // 100 frames: the burst
        #expect(verdicts.filter { $0 == .tooFast }.count == 50)
        // Real time refills it: 10 ms later one more frame, not two.
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 5_000 + Self.frameNs) == .accepted)
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 5_000 + Self.frameNs) == .tooFast)
    }

    @Test func aSenderAtTwiceRealTimeHasHalfItsFramesRefusedOnceItsBurstIsSpent() {
        var admission = SenderAdmission()
        var refused = 0
        for index in 0..<1_000 {  // 10 s of audio in 5 s
            if admission.admit(from: 1, audioNs: Self.frameNs, nowNs: UInt64(index) * Self.frameNs / 2) == .tooFast {
                refused += 1
            }
        }
        // The burst lasts 198 frames past the first (5 ms spent net each), then every other
        // frame is refused: frames 199, 201, … 999.
        #expect(refused == 401)
    }

    @Test func timeGoingBackwardsGrantsNothing() {
        var admission = SenderAdmission()
        for _ in 0..<100 { _ = admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 10_000_000_000) }
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 1) == .tooFast)
        #expect(admission.admit(from: 1, audioNs: Self.frameNs, nowNs: 10_000_000_000) == .tooFast)
    }
}
