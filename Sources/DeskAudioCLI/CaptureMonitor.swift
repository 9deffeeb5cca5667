import DeskAudio
import Glibc

/// The loop `record` and `meter` share: every 100 ms a fresh stats snapshot, the time
/// since capture started and what the zero gate did since the last look.
struct CaptureMonitor {
    /// What the zero gate did over the last interval.
    enum GateState: String {
        /// Frames went out.
        case open
        /// Frames were captured but held back: 8 s of digital silence.
        case closed
        /// No frames were captured (the server sends nothing yet).
        case idle
    }

    private let service: AudioService
    private let start = ContinuousClock.now
    private var previous = CaptureStats()
    /// The snapshot of the last `poll()`.
    private(set) var stats = CaptureStats()
    /// The gate's state over the last interval.
    private(set) var gate = GateState.idle
    /// What the library warned about over the last interval ("app audio: no audio for …").
    private(set) var warnings: [String] = []
    private let inbox = WarningInbox()

    /// Polls `service`, whose warnings it collects from now on.
    init(service: AudioService) {
        self.service = service
        let inbox = self.inbox
        service.notices.setLogHandler({ _, text in inbox.add(text) }, level: .warning)
    }

    /// Seconds since the monitor was made.
    var elapsedSeconds: Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }

    /// Waits 100 ms, then takes a snapshot.
    mutating func poll() {
        usleep(100_000)
        previous = stats
        stats = service.stats()
        warnings = inbox.takeAll()
        if stats.framesSent > previous.framesSent {
            gate = .open
        } else if stats.framesGated > previous.framesGated {
            gate = .closed
        } else if stats.framesCaptured == previous.framesCaptured {
            gate = .idle
        }
    }

    /// Polls and shows `lines` (made from this monitor each time) until Ctrl-C, or until
    /// `seconds` have passed.
    mutating func show(until seconds: Double?, _ lines: (CaptureMonitor) -> [String]) {
        var display = StatusDisplay()
        while !InterruptSignal.wasRaised {
            poll()
            display.note(warnings)
            display.show(lines(self), elapsedSeconds: elapsedSeconds)
            if let seconds, elapsedSeconds >= seconds { break }
        }
    }

    /// "app -6.0 dBFS  mic silent  gate open": each source's peak and the gate.
    var sourcesAndGate: String {
        var line = ""
        if let app = stats.app { line += "app \(Self.decibels(app.peakDBFS))  " }
        if let mic = stats.mic { line += "mic \(Self.decibels(mic.peakDBFS))  " }
        return line + "gate \(gate.rawValue)"
    }

    /// A level for people: "-12.3 dBFS", or "silent" at the floor.
    static func decibels(_ value: Float) -> String {
        value <= -120 ? "silent" : "\(Double((value * 10).rounded()) / 10) dBFS"
    }
}

/// Warnings the library's notice thread hands over to the polling loop.
private final class WarningInbox: Sendable {
    private let texts = LockedValue<[String]>([])

    func add(_ text: String) { texts.withLock { $0.append(text) } }

    func takeAll() -> [String] {
        texts.withLock { texts in
            defer { texts = [] }
            return texts
        }
    }
}
