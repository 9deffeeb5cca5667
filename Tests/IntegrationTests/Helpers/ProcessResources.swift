import Foundation

/// Files the process has open (/proc/self/fd).
func openFileDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
}

/// The names of the threads the process runs (/proc/self/task/*/comm).
func runningThreads() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap {
        (try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }.sorted()
}

/// One thread of the process as /proc/self/task/TID/stat shows it.
struct ThreadUsage: Sendable {
    var name: String
    /// The scheduling policy: 0 SCHED_OTHER, 1 SCHED_FIFO, 2 SCHED_RR.
    var policy: Int
    /// User and system CPU time so far, in clock ticks (usually 10 ms).
    var cpuTicks: Int
}

/// The process's threads by thread id.
func threadUsage() -> [String: ThreadUsage] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    var usage: [String: ThreadUsage] = [:]
    for task in tasks {
        guard let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
            let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")")
        else { continue }
        // Fields after the name: state is field 3, utime 14, stime 15, policy 41.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count >= 39, let user = Int(fields[11]), let system = Int(fields[12]), let policy = Int(fields[38])
        else { continue }
        usage[task] = ThreadUsage(
            name: String(stat[stat.index(after: open)..<close]), policy: policy, cpuTicks: user + system)
    }
    return usage
}

/// The threads that used most CPU between two `threadUsage()` readings, as
/// "name (policy) ticks", busiest first.
func busiestThreads(from before: [String: ThreadUsage], to after: [String: ThreadUsage], count: Int = 4) -> [String] {
    let policies = [0: "other", 1: "fifo", 2: "rr", 3: "batch", 5: "idle"]
    return after.map { id, now in (now, now.cpuTicks - (before[id]?.cpuTicks ?? 0)) }
        .sorted { $0.1 > $1.1 }.prefix(count)
        .map { "\($0.0.name) (\(policies[$0.0.policy] ?? "\($0.0.policy)")) \($0.1)" }
}

/// The whole machine's waiting so far, in ms: the kernel's pressure stall totals
/// (/proc/pressure: some task waited for the CPU, for I/O, all of them for I/O, some for
/// memory) and the time the hypervisor ran something else on this VM's CPUs (/proc/stat's
/// steal). Differences between two readings say what the machine went through meanwhile.
struct MachineWaiting {
    var cpuSomeMs = 0.0
    var ioSomeMs = 0.0
    var ioFullMs = 0.0
    var memorySomeMs = 0.0
    var stealMs = 0.0

    static func now() -> MachineWaiting {
        func total(_ resource: String, _ kind: String) -> Double {
            let text = (try? String(contentsOfFile: "/proc/pressure/\(resource)", encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first { $0.hasPrefix(kind) } ?? ""
            let field = line.split(separator: " ").first { $0.hasPrefix("total=") }
            return (field.flatMap { Double($0.dropFirst("total=".count)) } ?? 0) / 1000
        }
        let stat = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8)) ?? ""
        let cpu = stat.split(separator: "\n").first.map { $0.split(separator: " ") } ?? []
        let steal = cpu.count > 8 ? (Double(cpu[8]) ?? 0) * 1000 / Double(sysconf(Int32(_SC_CLK_TCK))) : 0
        return MachineWaiting(
            cpuSomeMs: total("cpu", "some"), ioSomeMs: total("io", "some"), ioFullMs: total("io", "full"),
            memorySomeMs: total("memory", "some"), stealMs: steal)
    }

    /// What happened between `earlier` and this reading, for a message.
    func since(_ earlier: MachineWaiting) -> String {
        String(
            format: "the machine meanwhile: CPU waited on %.0f ms, I/O %.0f ms (all tasks %.0f ms), memory %.0f ms, VM steal %.0f ms",
            cpuSomeMs - earlier.cpuSomeMs, ioSomeMs - earlier.ioSomeMs, ioFullMs - earlier.ioFullMs,
            memorySomeMs - earlier.memorySomeMs, stealMs - earlier.stealMs)
    }
}
