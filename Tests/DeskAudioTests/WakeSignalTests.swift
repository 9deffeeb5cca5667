import DeskAudio
import Testing

@Suite struct WakeSignalTests {
    @Test func aRingWakesTheWorkerOnlyOnceItHoldsWhatIsAwaited() {
        let wake = WakeSignal()
        wake.awaitFloats(896)
        wake.signal(ringHolding: 512)
        #expect(!wake.wait(milliseconds: 1), "a ring short of the next frame must not wake")
        wake.signal(ringHolding: 896)
        #expect(wake.wait(milliseconds: 1))
        wake.signal(ringHolding: 1024)
        #expect(wake.wait(milliseconds: 1))
        #expect(!wake.wait(milliseconds: 1), "one wake per signal")
    }

    @Test func aPlainSignalAlwaysWakes() {
        let wake = WakeSignal()
        wake.awaitFloats(960)
        wake.signal()
        #expect(wake.wait(milliseconds: 1))
    }
}
