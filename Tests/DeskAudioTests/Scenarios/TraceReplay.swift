import Foundation
import TestSupport

@testable import DeskAudio

/// A timing trace a real server's stream left (`TimingTrace`, DESKAUDIO_TRACE), read back:
/// the reports in order, and what the library counted of the stream live.
struct RecordedTrace {
    enum Event {
        case pipeWire(PipeWireCycleReport, samples: Int, checksum: UInt64, zero: Bool)
        case pulseRead(mark: ClockEstimator.Line?, marked: Bool, readable: Int, nowNs: UInt64, fragments: [Fragment])
        case arrivalRead(nowNs: UInt64, readable: Int, timing: PulseTimingUpdate?, fragments: [Fragment])
    }

    struct Fragment {
        var floats: Int
        var checksum: UInt64
        var zero: Bool
        var hole: Bool
    }

    let path: ScriptedServer.Path
    let channels: Int
    let readsMonitor: Bool
    /// When the stream opened (CLOCK_MONOTONIC ns; 0 in traces from before that was noted),
    /// and whether the library linked its device itself.
    private(set) var openedNs: UInt64 = 0
    private(set) var linkingItself = false
    private(set) var events: [Event] = []
    /// What the live run counted: samples the server moved past the stream, cycles of zeros.
    private(set) var skippedSamples = 0
    private(set) var zeroCycles = 0

    /// The trace in `file` (Tests/Vectors/traces/NAME).
    init(named name: String) throws {
        try self.init(text: RecordedTrace.text(named: name))
    }

    /// Each stream's trace in `file`, in the order the streams opened (a capture across a
    /// server's restart left two).
    static func streams(named name: String) throws -> [RecordedTrace] {
        let text = try RecordedTrace.text(named: name)
        return try text.components(separatedBy: "# deskaudio timing trace 1\n").filter { !$0.isEmpty }.map {
            try RecordedTrace(text: $0)
        }
    }

    private static func text(named name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Vectors/traces/\(name)")
        return try String(contentsOf: url, encoding: .utf8)
    }

    init(text: String) throws {
        var path: ScriptedServer.Path?
        var channels = 2
        var monitor = true
        var openedNs: UInt64 = 0
        var linkingItself = false
        var events: [Event] = []
        for line in TraceLine.lines(of: text) {
            let (words, fields, int) = (line.words, line.fields, line.int)
            switch line.kind {
            case "stream":
                let kinds: [String: ScriptedServer.Path] = [
                    "pipewire": .pipeWire, "pulseaudio": .pulseAudio, "pipewire-pulse": .pipeWirePulse,
                ]
                path = words.count > 1 ? kinds[String(words[1])] : nil
                channels = Int(int("channels"))
                monitor = int("monitor") == 1
                openedNs = UInt64(int("opened"))
                linkingItself = int("linking") == 1
            case "pw":
                let rate = (fields["rate"] ?? "1/48000").split(separator: "/").map { UInt32($0) ?? 0 }
                let report = PipeWireCycleReport(
                    nowNs: int("now"), delayTicks: int("delay"), ticks: UInt64(int("ticks")), rate: (rate[0], rate[1]),
                    cycleDurationTicks: fields["dur"] == "-" ? nil : UInt64(int("dur")))
                events.append(.pipeWire(report, samples: Int(int("n")), checksum: UInt64(fields["sum"] ?? "") ?? 0, zero: int("zero") == 1))
            case "pa":
                let mark = fields["mark"].flatMap { text -> ClockEstimator.Line? in
                    let parts = text.split(separator: ":").compactMap { Int64($0) }
                    guard parts.count == 2 else { return nil }
                    return ClockEstimator.Line(
                        position: parts[0], timeNs: Double(parts[1]), nanosecondsPerSample: FramePipeline.nominalNanosecondsPerSample)
                }
                events.append(.pulseRead(mark: mark, marked: int("marked") == 1, readable: Int(int("readable")), nowNs: UInt64(int("now")), fragments: []))
            case "pp":
                let timing = fields["timing"].flatMap { text -> PulseTimingUpdate? in
                    let parts = text.split(separator: ":")
                    guard parts.count == 3 else { return nil }
                    let stamp = parts[2].split(separator: ".").map { Int($0) ?? 0 }
                    return PulseTimingUpdate(
                        sourceUsec: UInt64(parts[0]) ?? 0, transportUsec: UInt64(parts[1]) ?? 0,
                        stamp: timeval(tv_sec: stamp[0], tv_usec: stamp.count > 1 ? stamp[1] : 0))
                }
                events.append(.arrivalRead(nowNs: UInt64(int("now")), readable: Int(int("readable")), timing: timing, fragments: []))
            case "frag", "hole":
                let fragment = Fragment(
                    floats: Int(int("n")), checksum: UInt64(fields["sum"] ?? "") ?? 0, zero: int("zero") == 1,
                    hole: words.first == "hole")
                switch events.popLast() {
                case .pulseRead(let mark, let marked, let readable, let now, let fragments)?:
                    events.append(.pulseRead(mark: mark, marked: marked, readable: readable, nowNs: now, fragments: fragments + [fragment]))
                case .arrivalRead(let now, let readable, let timing, let fragments)?:
                    events.append(.arrivalRead(nowNs: now, readable: readable, timing: timing, fragments: fragments + [fragment]))
                case let other?: events.append(other)
                case nil: break
                }
            case "end":
                skippedSamples = Int(int("skipped"))
                zeroCycles = Int(int("zero-cycles"))
            default: break
            }
        }
        guard let path else { throw DeskAudioError.invalidArgument("not a timing trace") }
        self.path = path
        self.channels = channels
        readsMonitor = monitor
        self.openedNs = openedNs
        self.linkingItself = linkingItself
        self.events = events
    }

    /// The first time in it (ns), for a virtual clock to start before.
    var firstNs: UInt64 {
        switch events.first {
        case .pipeWire(let report, _, _, _)?: UInt64(report.nowNs)
        case .pulseRead(_, _, _, let now, _)?: now
        case .arrivalRead(let now, _, _, _)?: now
        case nil: 0
        }
    }
}

extension Scenario {
    /// Replays `trace` into the app stream (or the microphone's), as its server handed it:
    /// the clock moved to each report's time, each buffer's samples a tone (the same samples
    /// again where the checksum repeats; zeros where they were zeros), a round of the service
    /// after each.
    func replay(_ trace: RecordedTrace) {
        let stream = trace.readsMonitor ? app : mic
        var buffers: [UInt64: [Float]] = [:]
        let samples = { (floats: Int, checksum: UInt64, zero: Bool) -> [Float] in
            if zero { return [Float](repeating: 0, count: floats) }
            if let known = buffers[checksum], known.count == floats { return known }
            let made = self.tone(floats / 2, for: stream)
            buffers[checksum] = made
            return made
        }
        let fragments = { (list: [RecordedTrace.Fragment]) in
            list.map { fragment -> ScriptedStream.Fragment in
                fragment.hole ? .hole(floats: fragment.floats) : .samples(samples(fragment.floats, fragment.checksum, fragment.zero))
            }
        }
        // Plain PulseAudio's buffer: the audio the reads took live, in order. A read takes
        // what the live one took, and where the live library held a read back (no fragments),
        // what was readable then; what a read held back here waits for the next.
        let serverAudio = trace.events.flatMap { event -> [RecordedTrace.Fragment] in
            guard case .pulseRead(_, _, _, _, let list) = event else { return [] }
            return list
        }
        var readUpTo = 0, liveReadUpTo = 0
        let serverRead = { (readable: Int, heldLive: Bool) -> [RecordedTrace.Fragment] in
            var end = max(readUpTo, liveReadUpTo)
            if heldLive {
                var readableEnd = readUpTo, floats = 0
                while readableEnd < serverAudio.count && floats < readable / MemoryLayout<Float>.size {
                    floats += serverAudio[readableEnd].floats
                    readableEnd += 1
                }
                end = max(end, readableEnd)
            }
            defer { readUpTo = end }
            return Array(serverAudio[readUpTo..<end])
        }
        for event in trace.events {
            switch event {
            case .pipeWire(let report, let count, let checksum, let zero):
                clock.set(max(clock.nowNs, UInt64(max(report.nowNs, 0))))
                stream.pipeWireBuffer(samples(count * trace.channels, checksum, zero), report: report)
            case .pulseRead(let mark, let marked, let readable, let now, let list):
                clock.set(max(clock.nowNs, now))
                liveReadUpTo += list.count
                stream.replayedPulseRead(mark: mark, marked: marked, readable: readable) {
                    fragments(serverRead(readable, list.isEmpty))
                }
            case .arrivalRead(let now, let readable, let timing, let list):
                clock.set(max(clock.nowNs, now))
                stream.replayedArrivalRead(readable: readable, timing: timing, fragments: fragments(list))
            }
            step()
        }
    }
}
