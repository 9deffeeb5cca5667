import ArgumentParser
import DeskAudio
import Glibc

/// `deskaudio doctor`: why a capture hears nothing, one line per check with the fix.
struct DoctorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check why a capture would be silent: server, default sink, applications, levels, gate.",
        discussion: """
            Each check prints one line, "ok", "warning" or "problem", with the fix. Exits 1 when \
            there is a problem. Listens to app audio and the microphone for --listen-ms.

            Examples:
              deskaudio doctor
              deskaudio doctor --backend pulse --listen-ms 3000
            """
    )

    @Option(help: BackendChoice.help)
    var backend = BackendChoice.auto

    @Option(help: "How long to listen to app audio and the microphone, in ms (1 to 10000).")
    var listenMs = 1000

    func validate() throws {
        guard (1...10_000).contains(listenMs) else { throw ValidationError("--listen-ms must be 1 to 10000") }
    }

    func run() throws {
        let findings = Diagnosis.run(backend: backend.backend, listenMs: listenMs)
        for finding in findings {
            let label = switch finding.severity {
            case .ok: "ok:      "
            case .warning: "warning: "
            case .problem: "problem: "
            }
            print(label + finding.text)
        }
        if findings.contains(where: { $0.severity == .problem }) { throw ExitCode(1) }
    }
}
