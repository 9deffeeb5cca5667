import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// Choosing applications (deskaudio_capture_set_apps) against named players, checked on the
    /// decoded audio: on PipeWire's native backend (links into the capture), and through the
    /// PulseAudio API on pipewire-pulse and on the plain PulseAudio daemon (a record stream per
    /// sink input, mixed).
    @Suite struct AppRoutingTests {
        /// What a capture of applications recorded (R-APP-LEVEL): its frames; what the speakers played
        /// meanwhile (a whole-sink capture beside it, the reference: a player that underruns on
        /// a loaded machine leaves its gaps in both); and the frames' worth its own mix of the
        /// applications' streams filled with silence or dropped because one lagged (the
        /// PulseAudio API path, on a loaded machine; counted in its stats).
        struct Recorded {
            let frames: FrameCollector
            let speakers: FrameCollector
            let mixGaps: UInt64
        }

        /// A capture handle on `backend` recording app audio as `mode` over `names`, started,
        /// with frames flowing, while `play` runs; returns what it recorded. `events` collects
        /// its events.
        static func captureApps(
            _ mode: deskaudio_apps_mode, _ names: [String], backend: String = "pipewire", includeOwnProcess: Bool = false,
            events: NoticeCollector? = nil, play: () throws -> Void
        ) throws -> Recorded {
            let (speakers, speakersHeard) = try MuteHostTests.speakers(backend)
            defer { deskaudio_capture_destroy(speakers) }
            let capture = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(capture) }
            let collector = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, collector.userData) == 0)
            if let events {
                #expect(deskaudio_capture_set_event_callback(capture, NoticeCollector.onEvent, events.userData) == 0)
            }
            #expect(deskaudio_capture_set_backend(capture, backend) == 0)
            #expect(setApps(capture, mode, names, includeOwnProcess: includeOwnProcess) == 0, "\(lastError())")
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(lastError())")
            #expect(waitUntil(seconds: 3) { collector.count >= 10 }, "frames flow before anything plays")
            try play()
            Thread.sleep(forTimeInterval: 0.3)
            var stats = deskaudio_stats()
            #expect(deskaudio_capture_get_stats(capture, &stats, MemoryLayout<deskaudio_stats>.size) == 0)
            #expect(deskaudio_capture_enable(capture, false, false) == 0)
            #expect(deskaudio_capture_enable(speakers, false, false) == 0)
            return Recorded(
                frames: collector, speakers: speakersHeard, mixGaps: stats.frames_silence_filled + stats.frames_dropped_late)
        }

        static func setApps(
            _ capture: deskaudio_capture?, _ mode: deskaudio_apps_mode, _ names: [String], includeOwnProcess: Bool = false
        ) -> Int32 {
            let copies = names.map { UnsafePointer(strdup($0)) }
            defer { copies.forEach { free(UnsafeMutablePointer(mutating: $0)) } }
            return copies.withUnsafeBufferPointer {
                deskaudio_capture_set_apps(capture, mode.rawValue, $0.baseAddress, names.count, includeOwnProcess)
            }
        }

        static func lastError() -> String { String(cString: deskaudio_last_error()!) }

        /// Three applications at once, 1.5 s at 0.3 each: ToneA 440 Hz, ToneB 1000 Hz, ToneC 1500 Hz
        /// (every tone made before the first player starts, so they start together).
        static func playThreeApps(_ environment: [String: String]) throws {
            let tones = [(440.0, "ToneA"), (1000, "ToneB"), (1500, "ToneC")].map { frequency, name in
                (SignalAnalysis.sine(frequency: frequency, amplitude: 0.3, frames: 72_000), name)
            }
            let players = try tones.map { tone, name in
                try ExternalTools.play(tone, application: name, environment: environment)
            }
            players.forEach { $0.waitUntilExit() }
        }

        /// Levels (dBFS) of `frequencies` in the decoded frames, as the median of 100 ms
        /// Hann-windowed blocks over the stretch where every tone in `steady` (those that must
        /// be there) is steady: players started together still start tens of ms apart on a
        /// loaded machine, and a tone that must be absent is measured there, not around a click
        /// that a stream's abrupt start or end leaves.
        static func levels(_ frames: FrameCollector, _ frequencies: [Double], steady: [Double]) throws -> [Double] {
            let decoded = try frames.decoded()
            let channel = SignalAnalysis.left(decoded[...])
            var around = 0..<channel.count
            for frequency in steady {
                guard let stretch = SignalAnalysis.steadyStretch(decoded, frequency: frequency) else {
                    Issue.record("the \(frequency) Hz tone is not in the capture")
                    return frequencies.map { _ in -200 }
                }
                around = around.clamped(to: stretch)
            }
            guard around.count >= 24_000 else {
                Issue.record("the tones \(steady) are steady together for \(around.count) samples, under 0.5 s")
                return frequencies.map { _ in -200 }
            }
            return frequencies.map { SignalAnalysis.medianBlockLevel(channel[around], frequency: $0) }
        }

        /// A tone that must not be recorded is below this (dBFS): one recorded by mistake is at
        /// the level played, -13.5; Opus's coding noise is below -90, and the clicks of a player
        /// starved on a loaded machine put up to -62 at the other tones (seen once).
        static let absentLevel = quietSineLevel - 40

        /// The levels of `frequencies` (as `levels` measures them) in the capture, and in what
        /// the speakers played beside it.
        static func heardLevels(
            _ recorded: Recorded, _ frequencies: [Double], steady: [Double]
        ) throws -> (ours: [Double], speakers: [Double]) {
            (try levels(recorded.frames, frequencies, steady: steady), try levels(recorded.speakers, frequencies, steady: steady))
        }

        /// A tone that must be recorded, at `level` in the capture, is at the level the speakers
        /// heard (`heard`), within 1 dB; how far that is from the level played is the players'
        /// and the server's (a player starved on a loaded machine), measured. When the capture's
        /// own mix counted gaps (a stream that lagged past its wait), the tone is lower by what
        /// fell into them: then it is only required to be there.
        static func expectHeardLevel(
            _ level: Double, heard: Double, _ recorded: Recorded, _ what: String, test: String = #function,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            if recorded.mixGaps == 0 {
                #expect(
                    abs(level - heard) <= 1, "\(what) at \(level) dBFS, the speakers' at \(heard)",
                    sourceLocation: sourceLocation)
            } else {
                #expect(
                    level <= heard + 1 && level > heard - 20,
                    "\(what) at \(level) dBFS, the speakers' at \(heard), \(recorded.mixGaps) frames of gaps in the capture's mix",
                    sourceLocation: sourceLocation)
                print("measured: \(what) at \(level) dBFS beside \(recorded.mixGaps) frames of gaps in the capture's mix")
            }
            expectWithinBudget(
                "\(what): the speakers' level less the level played", heard - quietSineLevel, unit: "dB", .atLeast(-6),
                test: test, sourceLocation: sourceLocation)
        }

        @Test func onlyTheChosenApplicationIsRecorded() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                let recorded = try Self.captureApps(.DESKAUDIO_APPS_ONLY, ["tonea"], backend: backend) {
                    try Self.playThreeApps(environment)
                }
                let (levels, heard) = try Self.heardLevels(recorded, [440, 1000, 1500], steady: [440])
                Self.expectHeardLevel(levels[0], heard: heard[0], recorded, "\(path): ToneA's 440 Hz")
                #expect(levels[1] < Self.absentLevel && levels[2] < Self.absentLevel, "\(path): the others: \(levels)")
                try Self.expectWhole(recorded.frames, path)
                print("measured: \(path): only ToneA: 440/1000/1500 Hz at \(levels) dBFS")
            }
        }

        @Test func everyApplicationButTheExcludedOneIsRecorded() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                let recorded = try Self.captureApps(.DESKAUDIO_APPS_ALL_EXCEPT, ["ToneA"], backend: backend) {
                    try Self.playThreeApps(environment)
                }
                try Self.expectWhole(recorded.frames, path)
                let (levels, heard) = try Self.heardLevels(recorded, [440, 1000, 1500], steady: [1000, 1500])
                Self.expectHeardLevel(levels[1], heard: heard[1], recorded, "\(path): ToneB's 1000 Hz")
                Self.expectHeardLevel(levels[2], heard: heard[2], recorded, "\(path): ToneC's 1500 Hz")
                #expect(levels[0] < Self.absentLevel, "\(path): ToneA's 440 Hz at \(levels[0]) dBFS")
                print("measured: \(path): all except ToneA: 440/1000/1500 Hz at \(levels) dBFS")
            }
        }

        /// The frames run on without a gap in their sequence or sample clock (a record stream per
        /// application, mixed, keeps one time line).
        static func expectWhole(_ collector: FrameCollector, _ path: String) throws {
            let frames = try collector.parsed()
            for (previous, next) in zip(frames, frames.dropFirst()) {
                guard next.header.sequence == previous.header.sequence &+ 1,
                    next.header.sampleClock == previous.header.sampleClock &+ 480
                else {
                    Issue.record("\(path): frames \(previous.header) then \(next.header)")
                    return
                }
            }
        }

        /// A fourth application starts 1 s into the capture: the selection hears it within
        /// 200 ms of a whole-sink capture beside it (which hears it as soon as it plays), and
        /// the capture's host is told.
        @Test func anApplicationThatStartsDuringTheCaptureIsHeardWithin200ms() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                let (whole, wholeFrames) = try MuteHostTests.speakers(backend)
                defer { deskaudio_capture_destroy(whole) }
                let events = NoticeCollector()
                let chosen = try Self.captureApps(.DESKAUDIO_APPS_ONLY, ["ToneD"], backend: backend, events: events) {
                    Thread.sleep(forTimeInterval: 1)
                    try ExternalTools.playTone(
                        frequency: 2000, amplitude: 0.3, seconds: 1, application: "ToneD", environment: environment
                    ).waitUntilExit()
                }
                #expect(deskaudio_capture_enable(whole, false, false) == 0)
                let heardWhole = try #require(try Self.firstFrameTime(wholeFrames, holding: 2000), "\(path)")
                let heardChosen = try #require(try Self.firstFrameTime(chosen.frames, holding: 2000), "\(path)")
                let lateMs = (Double(heardChosen) - Double(heardWhole)) / 1e6
                // How soon the new application's routing follows is real time (a registry event,
                // a link): under ThreadSanitizer beside the suites it took 267 ms once (clean-clone
                // run 45). Measured, judged in the plain suites only, as every such figure.
                expectWithinBudget(
                    "an application started during the capture, heard after the whole sink's capture", lateMs, unit: "ms",
                    .atMost(200), "\(path)")
                #expect(
                    waitUntil(seconds: 1) {
                        events.events.contains {
                            $0.kind == deskaudio_event.DESKAUDIO_EVENT_APP_STARTED.rawValue && $0.text.contains("ToneD")
                                && $0.text.hasSuffix(": recorded")
                        }
                    }, "\(path): \(events.events)")
                print("measured: \(path): ToneD started mid-capture: heard \(lateMs) ms after the whole-sink capture heard it")
            }
        }

        /// The capture time of the first frame (captured after `time`) in which `frequency` is
        /// above -30 dBFS.
        static func firstFrameTime(
            _ collector: FrameCollector, holding frequency: Double, after time: UInt64 = 0
        ) throws -> UInt64? {
            let frames = try collector.parsed()
            let decoded = try collector.decoded()
            for (index, frame) in frames.enumerated()
            where (index + 1) * 960 <= decoded.count && frame.header.captureTimeNs > time {
                let samples = SignalAnalysis.left(decoded[(index * 960)..<((index + 1) * 960)])
                if SignalAnalysis.toneLevelDecibels(samples, frequency: frequency) > -30 {
                    return frame.header.captureTimeNs
                }
            }
            return nil
        }

        /// The host plays 440 Hz itself (libpulse in this process) while ToneB plays 1500 Hz:
        /// all-except-nothing records ToneB and not the host, until the host asks for itself.
        /// (The tones are far apart: Opus's coding noise around one tone is not the other.)
        /// ToneB lasts twice the host's tone, which starts 0.3 s into it: the two are measured
        /// where both are steady, and two 1.5 s tones started one after the other overlapped
        /// 0.46 s under AddressSanitizer (the clean-clone run of a4d039b).
        @Test func theHostsOwnPlaybackIsLeftOutUntilAskedFor() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                func play() throws {
                    let other = try ExternalTools.playTone(
                        frequency: 1500, amplitude: 0.3, seconds: 3, application: "ToneB", environment: environment)
                    Thread.sleep(forTimeInterval: 0.3)
                    try InProcessPlayer.play(frequency: 440, amplitude: 0.3, seconds: 1.5, name: "HostItself")
                    other.waitUntilExit()
                }
                let recordedWithout = try Self.captureApps(.DESKAUDIO_APPS_ALL_EXCEPT, [], backend: backend) { try play() }
                let (without, heardWithout) = try Self.heardLevels(recordedWithout, [440, 1500], steady: [1500])
                Self.expectHeardLevel(without[1], heard: heardWithout[1], recordedWithout, "\(path): ToneB's 1500 Hz")
                #expect(without[0] < Self.absentLevel, "\(path): the host's own 440 Hz at \(without[0]) dBFS")
                let recordedWith = try Self.captureApps(
                    .DESKAUDIO_APPS_ALL_EXCEPT, [], backend: backend, includeOwnProcess: true
                ) { try play() }
                let (with, heardWith) = try Self.heardLevels(recordedWith, [440, 1500], steady: [440, 1500])
                Self.expectHeardLevel(with[0], heard: heardWith[0], recordedWith, "\(path): the host's own 440 Hz, asked for")
                Self.expectHeardLevel(with[1], heard: heardWith[1], recordedWith, "\(path): ToneB's 1500 Hz beside it")
                print("measured: \(path): host's own 440 Hz left out: \(without[0]) dBFS; put back in: \(with[0]) dBFS")
            }
        }

        /// The links a selection makes belong to the capturing process's connection: a host
        /// killed with SIGKILL leaves none behind, and the application plays on to its sink.
        @Test func aKilledHostLeavesNoLinksBehind() throws {
            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 4, application: "ToneA")
            defer { player.waitUntilExit() }
            Thread.sleep(forTimeInterval: 0.3)
            let (host, _, _) = try ExternalTools.start(
                [commandLineTool, "record", "--only", "ToneA", "--seconds", "30", "--backend", "pipewire", "/dev/null"])
            func linksInto(_ node: String) throws -> [String] {
                let listing = try ExternalTools.run(["pw-link", "--links"]).output.split(separator: "\n")
                // "  |<- ToneA:output_FL" lines follow the input port they feed.
                var into = ""
                var found: [String] = []
                for line in listing {
                    if !line.hasPrefix(" ") { into = String(line) } else if into.hasPrefix(node), line.contains("|<-") {
                        found.append("\(into) <- \(line.split(separator: " ").last ?? "")")
                    }
                }
                return found
            }
            #expect(
                waitUntil(seconds: 3) { (try? linksInto("deskaudio:input_"))?.count == 2 },
                "ToneA linked into the capture: \((try? linksInto("deskaudio:input_")) ?? [])")
            kill(host.processIdentifier, SIGKILL)
            host.waitUntilExit()
            #expect(
                waitUntil(seconds: 1) { (try? linksInto("deskaudio:input_"))?.isEmpty == true },
                "links left: \((try? linksInto("deskaudio:input_")) ?? [])")
            #expect(try linksInto("deskaudio_sink:playback_").contains { $0.contains("ToneA:output_") }, "still playing")
        }

        @Test func thePlayingApplicationsAreListed() throws {
            final class Listing: @unchecked Sendable {
                var entries: [(name: String, binary: String, pid: Int32, running: Bool)] = []
            }
            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 10, application: "ToneA")
            defer { player.terminate(); player.waitUntilExit() }
            // Listed once its stream is on the server: how soon pacat gets there is the load's.
            var listing = Listing(), count: Int32 = 0
            _ = waitUntil(seconds: 5) {
                listing = Listing()
                count = deskaudio_list_apps(
                    { name, binary, pid, _, running, userData in
                        Unmanaged<Listing>.fromOpaque(userData!).takeUnretainedValue().entries.append(
                            (String(cString: name!), String(cString: binary!), pid, running))
                    }, Unmanaged.passUnretained(listing).toOpaque())
                return listing.entries.contains { $0.name == "ToneA" && $0.running }
            }
            #expect(count == Int32(listing.entries.count) && count >= 1, "\(Self.lastError())")
            let toneA = listing.entries.first { $0.name == "ToneA" }
            #expect(toneA?.binary == "pacat" && toneA?.pid == player.processIdentifier && toneA?.running == true,
                "\(listing.entries)")
        }

        /// Through the PulseAudio API a selection moves nothing: the speakers (the default
        /// sink's whole monitor) keep hearing the chosen application while it is recorded, and
        /// the capture follows the application when it is moved to another sink: the tone is
        /// recorded before the move and from 0.5 s after it to its end. How much of its 3 s the
        /// capture holds is a figure (how soon a new application's stream is joined bends
        /// under load: 2.79 s under ThreadSanitizer with the other sanitized suites at once).
        @Test func aSelectionThroughThePulseAudioAPILeavesTheStreamsWhereTheyPlay() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                guard backend == "pulse" else { return }
                let (speakers, heard) = try MuteHostTests.speakers(backend)
                defer { deskaudio_capture_destroy(speakers) }
                let other = "deskaudio_routing_other"
                let module = try ExternalTools.run(
                    ["pactl", "load-module", "module-null-sink", "sink_name=\(other)"], environment: environment
                ).output.trimmingCharacters(in: .whitespacesAndNewlines)
                defer { _ = try? ExternalTools.run(["pactl", "unload-module", module], environment: environment) }
                var movedAt: UInt64 = 0, endedAt: UInt64 = 0
                let app = try Self.captureApps(.DESKAUDIO_APPS_ONLY, ["ToneA"], backend: backend) {
                    let player = try ExternalTools.playTone(
                        frequency: 440, amplitude: 0.3, seconds: 3, application: "ToneA", environment: environment)
                    Thread.sleep(forTimeInterval: 1.2)
                    let input = try ExternalTools.run(["pactl", "list", "short", "sink-inputs"], environment: environment)
                        .output.split(separator: "\n").first { $0.contains("pacat") || $0.contains("ToneA") }
                        .map { String($0.split(separator: "\t")[0]) } ?? ""
                    _ = try ExternalTools.run(["pactl", "move-sink-input", input, other], environment: environment)
                    movedAt = MonotonicClock.nowNs()
                    player.waitUntilExit()
                    endedAt = MonotonicClock.nowNs()
                }
                #expect(deskaudio_capture_enable(speakers, false, false) == 0)
                let speakersLevels = try MuteHostTests.frameLevels(heard, of: 440).map(\.level)
                #expect(speakersLevels.contains { $0 > quietSineLevel - 3 }, "\(path): the speakers still hear ToneA")
                let recorded = try MuteHostTests.frameLevels(app.frames, of: 440)
                guard let first = recorded.firstIndex(where: { $0.level > quietSineLevel - 3 }),
                    let last = recorded.lastIndex(where: { $0.level > quietSineLevel - 3 })
                else {
                    Issue.record("\(path): ToneA never recorded")
                    return
                }
                let loud = recorded.filter { $0.level > quietSineLevel - 3 }.map(\.time)
                #expect(loud.contains { $0 < movedAt }, "\(path): ToneA recorded before the move")
                #expect(
                    loud.contains { $0 > movedAt + 500_000_000 && $0 < endedAt }, "\(path): ToneA recorded from 0.5 s after the move")
                let seconds = Double(recorded[last].time - recorded[first].time) / 1e9
                let dips = recorded[first...last].filter { $0.level < quietSineLevel - 1 }.count
                expectWithinBudget("\(path): ToneA recorded of its 3 s", seconds, unit: "s", .atLeast(2.5))
                print("measured: \(path): ToneA recorded \(seconds) s of 3 across a move to another sink, \(dips) frames more than 1 dB low")
            }
        }

        @Test func badSelectionsAreRefused() {
            let invalid = deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue
            let capture = deskaudio_capture_create()
            defer { deskaudio_capture_destroy(capture) }
            #expect(deskaudio_capture_set_apps(capture, 7, nil, 0, false) == invalid)
            #expect(deskaudio_capture_set_apps(capture, 1, nil, 0, false) == invalid, "ONLY with no name")
            #expect(deskaudio_capture_set_apps(capture, 1, nil, 2, false) == invalid, "NULL names")
            #expect(Self.setApps(capture, .DESKAUDIO_APPS_ONLY, [""]) == invalid, "an empty name")
            #expect(Self.setApps(capture, .DESKAUDIO_APPS_ONLY, Array(repeating: "x", count: 65)) == invalid)
        }
    }
}
