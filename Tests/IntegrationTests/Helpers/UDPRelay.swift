import DeskAudio
import Foundation
import Glibc
import TestSupport

/// A network on loopback with a schedule: every datagram sent to `port` is forwarded to
/// 127.0.0.1:`target` after 5 ms plus up to `jitterMs` (uniform), or dropped with probability
/// `loss`, both drawn from a fixed seed in the order datagrams arrive; a later datagram with
/// a shorter delay overtakes (reorders). No kernel netem needed.
final class UDPRelay: @unchecked Sendable {
    /// Where senders send.
    let port: UInt16
    private let input: Int32
    private let output: Int32
    private let state: LockedValue<State>
    private var threads: [Thread] = []

    private struct State {
        var random: SeededRandom
        var pending: [(dueNs: UInt64, bytes: [UInt8])] = []
        var received = 0
        var dropped = 0
        var droppedInside = 0
        var anyForwarded = false
        var dropRun = 0
        var longestDropRun = 0
        var stopped = false
        /// Per datagram forwarded that is an AudioFrame: when it went out, less its sample
        /// clock's time (ns): the spread of these is the jitter the receiver saw.
        var forwardOffsets: [Double] = []
    }

    init(target: UInt16, jitterMs: Double, loss: Double, seed: UInt64) throws {
        input = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        output = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        state = LockedValue(State(random: SeededRandom(seed: seed)))
        var timeout = timeval(tv_sec: 0, tv_usec: 20_000)
        setsockopt(input, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        port = try UDPRelay.bindLoopback(input, port: 0)
        var destination = UDPRelay.loopback(target)
        let connected = withUnsafePointer(to: &destination) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(output, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let receiving = Thread { [unowned self] in receive(jitterMs: jitterMs, loss: loss) }
        let forwarding = Thread { [unowned self] in forward() }
        threads = [receiving, forwarding]
        for thread in threads { thread.start() }
    }

    deinit {
        close(input)
        close(output)
    }

    /// Stops relaying; returns datagrams received and dropped, the most dropped in a row, and
    /// those dropped between two forwarded ones: the losses a receiver can see as gaps in its
    /// sequence (a run dropped before the first or after the last one forwarded leaves none).
    func stop() -> (received: Int, dropped: Int, longestDropRun: Int, droppedInside: Int) {
        state.withLock { $0.stopped = true }
        while threads.contains(where: \.isExecuting) { usleep(5_000) }
        return state.withLock { ($0.received, $0.dropped, $0.longestDropRun, $0.droppedInside) }
    }

    /// How unevenly the frames went out, against their sample clocks: the 99th less the 1st
    /// percentile of (time forwarded − sample clock time), in ms. The relay's own added delay
    /// is in it (up to `jitterMs`), and so is whatever the machine added: a sender or this
    /// relay not run in time sends frames late, in a bunch, as a network's jitter would.
    var forwardSpreadMs: Double {
        let offsets = state.withLock { $0.forwardOffsets }.sorted()
        guard offsets.count >= 100 else { return 0 }
        return (offsets[offsets.count * 99 / 100] - offsets[offsets.count / 100]) / 1e6
    }

    /// A UDP port on loopback nobody uses now (bound and let go: good enough for a test).
    static func freePort() throws -> UInt16 {
        let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(probe) }
        return try bindLoopback(probe, port: 0)
    }

    private func receive(jitterMs: Double, loss: Double) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !state.withLock({ $0.stopped }) {
            let count = recv(input, &buffer, buffer.count, 0)
            guard count > 0 else { continue }
            let now = MonotonicClock.nowNs()
            let bytes = Array(buffer[..<count])
            state.withLock { state in
                state.received += 1
                let delay = 5_000_000 + Double.random(in: 0..<1, using: &state.random) * jitterMs * 1_000_000
                if Double.random(in: 0..<1, using: &state.random) < loss {
                    state.dropped += 1
                    state.dropRun += 1
                    state.longestDropRun = max(state.longestDropRun, state.dropRun)
                } else {
                    if state.anyForwarded { state.droppedInside += state.dropRun }
                    state.anyForwarded = true
                    state.dropRun = 0
                    state.pending.append((now + UInt64(delay), bytes))
                }
            }
        }
    }

    private func forward() {
        while !state.withLock({ $0.stopped }) {
            let now = MonotonicClock.nowNs()
            let due = state.withLock { state -> [[UInt8]] in
                let ready = state.pending.filter { $0.dueNs <= now }.sorted { $0.dueNs < $1.dueNs }
                state.pending.removeAll { $0.dueNs <= now }
                return ready.map(\.bytes)
            }
            for bytes in due {
                _ = bytes.withUnsafeBytes { send(output, $0.baseAddress, $0.count, 0) }
                let sentNs = Double(MonotonicClock.nowNs())
                if let header = bytes.withUnsafeBytes({ try? AudioFrameParser.parse($0).header }) {
                    state.withLock { $0.forwardOffsets.append(sentNs - Double(header.sampleClock) * 1e9 / 48_000) }
                }
            }
            usleep(500)
        }
    }

    /// Whether some socket of this machine is bound to UDP `port` (IPv4 or IPv6), as
    /// /proc/net/udp and udp6 list them: a receiver started in another process listens.
    static func isBound(_ port: UInt16) -> Bool {
        let portSuffix = String(format: ":%04X", port)
        return ["/proc/net/udp", "/proc/net/udp6"].contains { path in
            let table = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            // Each row after the heading: "  N: LOCAL_ADDRESS:PORT REMOTE_ADDRESS:PORT …".
            return table.split(separator: "\n").dropFirst().contains { row in
                row.split(separator: " ").dropFirst().first?.hasSuffix(portSuffix) == true
            }
        }
    }

    /// 127.0.0.1:`port`.
    static func loopback(_ port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    /// Binds `descriptor` to 127.0.0.1:`port` (0: any free one); the port it got.
    static func bindLoopback(_ descriptor: Int32, port: UInt16) throws -> UInt16 {
        var address = loopback(port)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 ? getsockname(descriptor, $0, &length) : -1
            }
        }
        guard result == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        return UInt16(bigEndian: address.sin_port)
    }
}
