import Foundation

/// The process's resident set, kB (/proc/self/status VmRSS).
func residentKilobytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

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
