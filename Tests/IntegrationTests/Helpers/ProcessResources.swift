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
