/// Notices graph cycles a capture stream missed. PipeWire's graph moves on each quantum
/// whether or not the stream's thread ran in time, and a buffer the stream did not take in
/// its cycle is gone: the graph's position at each buffer (`pw_time.ticks`, the position the
/// stream recorded as it took the buffer in, kept continuous across a change of driver),
/// against where the previous cycle ended (its position plus its duration), tells how much
/// audio went by unseen. The graph's own cycle durations are used,
/// not the buffers' lengths: when the quantum changes, a monitor's buffer lags the clock's
/// step, which is no loss (docs/reliability.md, R-PW-SKIP, R-PW-QUANTUM, R-PW-DRIVER). When the
/// whole graph ran late, the player missed those cycles too: the silence is the sink's own
/// (R-PW-GRAPH-LATE). Data
/// thread only; no allocation.
struct PipeWireCycleWatch {
    // Where the previous cycle ended, in ticks, and when it began (CLOCK_MONOTONIC ns) and lasted.
    private var previous: (endTicks: UInt64, nowNs: Int64, durationNs: Double)?

    /// A buffer came in the graph cycle at position `ticks` lasting `durationTicks` (units of
    /// `rate`: usually 1/48000 s) that began at `nowNs`: the 48 kHz samples that went by since
    /// the previous cycle ended without reaching the stream. A jump the cycles' own times do
    /// not bear out (the graph's driver changed, or its clock started again) counts as none.
    mutating func skippedSamples(
        ticks: UInt64, durationTicks: UInt64, rate: (num: UInt32, denom: UInt32), nowNs: Int64
    ) -> Int {
        let nsPerTick = 1e9 * Double(rate.num) / Double(rate.denom)
        defer { previous = (ticks &+ durationTicks, nowNs, Double(durationTicks) * nsPerTick) }
        guard let previous, ticks > previous.endTicks else { return 0 }
        let skippedNs = Double(ticks - previous.endTicks) * nsPerTick
        let elapsedNs = Double(nowNs - previous.nowNs) - previous.durationNs
        guard abs(elapsedNs - skippedNs) <= max(TimingPolicy.standard.cycleJumpToleranceNs, previous.durationNs) else { return 0 }
        return Int((skippedNs * Double(AudioFormat.sampleRate) / 1e9).rounded())
    }
}
