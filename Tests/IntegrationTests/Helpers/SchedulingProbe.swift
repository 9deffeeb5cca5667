import DeskAudio
import Foundation
import Glibc
import Synchronization

/// A thread of the test process that asks to wake every 2 ms and notes each time it woke
/// more than 20 ms late: the stretches in which this process got no CPU. A gap in the
/// library's callbacks that such a stall covers is the machine's (a VM without its CPU, a
/// build hogging both cores), not the library's.
final class SchedulingProbe: Sendable {
    /// A stretch in which the probe slept past its time, CLOCK_MONOTONIC ns.
    struct Stall: Sendable, CustomStringConvertible {
        var startNs: UInt64
        var endNs: UInt64
        var lengthMs: Double { Double(endNs - startNs) / 1e6 }
        var description: String { String(format: "%.1f ms", lengthMs) }
    }

    /// A wake this late (beyond the 2 ms asked for) counts as a stall.
    static let stallNs: UInt64 = 20_000_000
    private let state = Mutex<(stalls: [Stall], running: Bool)>(([], true))
    private let finished = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in run() }
        thread.name = "scheduling-probe"
        thread.start()
    }

    /// Stops the probe and returns the stalls it saw.
    func stop() -> [Stall] {
        state.withLock { $0.running = false }
        finished.wait()
        return state.withLock { $0.stalls }
    }

    /// Milliseconds of the stalls that overlap [startNs, endNs].
    static func stalledMs(_ stalls: [Stall], from startNs: UInt64, to endNs: UInt64) -> Double {
        stalls.reduce(0) { total, stall in
            let overlapStart = max(stall.startNs, startNs)
            let overlapEnd = min(stall.endNs, endNs)
            return total + (overlapEnd > overlapStart ? Double(overlapEnd - overlapStart) / 1e6 : 0)
        }
    }

    private func run() {
        var request = timespec(tv_sec: 0, tv_nsec: 2_000_000)
        while state.withLock({ $0.running }) {
            let before = MonotonicClock.nowNs()
            nanosleep(&request, nil)
            let after = MonotonicClock.nowNs()
            if after - before > 2_000_000 + Self.stallNs {
                state.withLock { $0.stalls.append(Stall(startNs: before + 2_000_000, endNs: after)) }
            }
        }
        finished.signal()
    }
}
