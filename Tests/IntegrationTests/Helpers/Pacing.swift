import DeskAudio
import Glibc

/// Sleeps until CLOCK_MONOTONIC reaches `deadlineNs` (returns at once if it has): a pacer that
/// sleeps to a fixed schedule catches up after a late wake-up instead of falling behind real time.
func sleepUntil(monotonicNs deadlineNs: UInt64) {
    let nowNs = MonotonicClock.nowNs()
    if deadlineNs > nowNs { usleep(UInt32((deadlineNs - nowNs) / 1000)) }
}
