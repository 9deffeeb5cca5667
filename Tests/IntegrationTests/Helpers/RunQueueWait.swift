import Glibc

/// How long some threads of this process have waited for a CPU while ready to run: the
/// kernel's run-queue delay (the second figure of /proc/self/task/TID/schedstat, ns), summed
/// over the threads. The files are opened once and read with pread into a buffer of its own,
/// so a reading allocates nothing and can be taken in a frame callback.
final class RunQueueWait: @unchecked Sendable {
    /// The threads read, as "name (tid)".
    let threads: [String]
    private let files: [Int32]
    /// Each thread's wait at its last reading: a thread that has ended keeps it, so the total
    /// never goes back.
    private var lastWaitNs: [UInt64]
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 128, alignment: 1)

    /// The process's threads that `choose` picks, as they are now.
    init(choosing choose: (ThreadUsage) -> Bool) {
        let chosen = threadUsage().filter { choose($0.value) }.sorted { $0.key < $1.key }
        let opened = chosen.map { (open("/proc/self/task/\($0.key)/schedstat", O_RDONLY | O_CLOEXEC), $0) }
            .filter { $0.0 >= 0 }
        files = opened.map(\.0)
        threads = opened.map { "\($0.1.value.name) (\($0.1.key))" }
        lastWaitNs = [UInt64](repeating: 0, count: files.count)
    }

    deinit {
        files.forEach { close($0) }
        buffer.deallocate()
    }

    /// Nanoseconds the threads have waited so far, all together (a thread that has ended
    /// counts as no more waiting); never less than at the previous reading.
    func totalNs() -> UInt64 {
        var total: UInt64 = 0
        for (index, file) in files.enumerated() {
            let count = pread(file, buffer.baseAddress, buffer.count, 0)
            guard count > 0 else {
                total += lastWaitNs[index]
                continue
            }
            // "RUN_NS WAIT_NS SLICES\n": the second number.
            var field = 0
            var value: UInt64 = 0
            for byte in buffer[0..<count] {
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                    if field == 1 { break }
                    field += 1
                } else if field == 1, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) {
                    value = value * 10 + UInt64(byte - UInt8(ascii: "0"))
                }
            }
            lastWaitNs[index] = value
            total += value
        }
        return total
    }
}
