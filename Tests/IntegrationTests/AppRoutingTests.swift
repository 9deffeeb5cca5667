import DeskAudio
import DeskAudioC
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// Choosing applications (deskaudio_capture_set_apps) on PipeWire's native backend, against
    /// named players on the private PipeWire, checked on the decoded audio.
    @Suite struct AppRoutingTests {
        /// A capture handle on `backend` recording app audio as `mode` over `names`, started,
        /// with frames flowing, while `play` runs; returns its frames. `events` collects its events.
        static func captureApps(
            _ mode: deskaudio_apps_mode, _ names: [String], includeOwnProcess: Bool = false,
            events: NoticeCollector? = nil, play: () throws -> Void
        ) throws -> FrameCollector {
            let capture = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(capture) }
            let collector = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, collector.userData) == 0)
            if let events {
                #expect(deskaudio_capture_set_event_callback(capture, NoticeCollector.onEvent, events.userData) == 0)
            }
            #expect(deskaudio_capture_set_backend(capture, "pipewire") == 0)
            #expect(setApps(capture, mode, names, includeOwnProcess: includeOwnProcess) == 0, "\(lastError())")
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(lastError())")
            #expect(waitUntil(seconds: 3) { collector.count >= 10 }, "frames flow before anything plays")
            try play()
            Thread.sleep(forTimeInterval: 0.3)
            #expect(deskaudio_capture_enable(capture, false, false) == 0)
            return collector
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

        /// Three applications at once, 1.5 s at 0.3 each: ToneA 440 Hz, ToneB 1000 Hz, ToneC 1500 Hz.
        static func playThreeApps() throws {
            let players = try [(440.0, "ToneA"), (1000, "ToneB"), (1500, "ToneC")].map { frequency, name in
                try ExternalTools.playTone(frequency: frequency, amplitude: 0.3, seconds: 1.5, application: name)
            }
            players.forEach { $0.waitUntilExit() }
        }

        /// Levels (dBFS) of `frequencies` in the decoded frames, as the median of 100 ms
        /// Hann-windowed blocks: a tone that is there over the stretch where it is steady (its
        /// abrupt onset, broadband, left out); one that never is, over the stretch where the
        /// tone at `reference` (one that must be there) is steady.
        static func levels(_ collector: FrameCollector, _ frequencies: [Double], reference: Double) throws -> [Double] {
            let decoded = try collector.decoded()
            let channel = SignalAnalysis.left(decoded[...])
            guard let around = SignalAnalysis.steadyStretch(decoded, frequency: reference) else {
                Issue.record("the \(reference) Hz tone is not in the capture")
                return frequencies.map { _ in -200 }
            }
            return frequencies.map { frequency in
                let stretch = SignalAnalysis.steadyStretch(decoded, frequency: frequency) ?? around
                return SignalAnalysis.medianBlockLevel(channel[stretch], frequency: frequency)
            }
        }

        @Test func onlyTheChosenApplicationIsRecorded() throws {
            let collector = try Self.captureApps(.DESKAUDIO_APPS_ONLY, ["tonea"]) { try Self.playThreeApps() }
            let levels = try Self.levels(collector, [440, 1000, 1500], reference: 440)
            #expect(abs(levels[0] - quietSineLevel) <= 1, "ToneA's 440 Hz at \(levels[0]) dBFS")
            #expect(levels[1] < levels[0] - 60 && levels[2] < levels[0] - 60, "the others: \(levels)")
            print("measured: only ToneA: 440/1000/1500 Hz at \(levels) dBFS")
        }

        @Test func everyApplicationButTheExcludedOneIsRecorded() throws {
            let collector = try Self.captureApps(.DESKAUDIO_APPS_ALL_EXCEPT, ["ToneA"]) { try Self.playThreeApps() }
            let levels = try Self.levels(collector, [440, 1000, 1500], reference: 1000)
            #expect(abs(levels[1] - quietSineLevel) <= 1 && abs(levels[2] - quietSineLevel) <= 1, "\(levels)")
            #expect(levels[0] < min(levels[1], levels[2]) - 60, "ToneA's 440 Hz at \(levels[0]) dBFS")
            print("measured: all except ToneA: 440/1000/1500 Hz at \(levels) dBFS")
        }

        /// A fourth application starts 1 s into the capture: the selection hears it within
        /// 200 ms of a whole-sink capture beside it (which hears it as soon as it plays), and
        /// the capture's host is told.
        @Test func anApplicationThatStartsDuringTheCaptureIsHeardWithin200ms() throws {
            let whole = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(whole) }
            let wholeFrames = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(whole, FrameCollector.callback, wholeFrames.userData) == 0)
            #expect(deskaudio_capture_enable(whole, false, true) == 0)
            let events = NoticeCollector()
            let chosen = try Self.captureApps(.DESKAUDIO_APPS_ONLY, ["ToneD"], events: events) {
                Thread.sleep(forTimeInterval: 1)
                try ExternalTools.playTone(frequency: 2000, amplitude: 0.3, seconds: 1, application: "ToneD")
                    .waitUntilExit()
            }
            #expect(deskaudio_capture_enable(whole, false, false) == 0)
            let heardWhole = try #require(try Self.firstFrameTime(wholeFrames, holding: 2000))
            let heardChosen = try #require(try Self.firstFrameTime(chosen, holding: 2000))
            let lateMs = (Double(heardChosen) - Double(heardWhole)) / 1e6
            #expect(lateMs <= 200, "heard \(lateMs) ms after the whole sink's capture")
            #expect(
                waitUntil(seconds: 1) {
                    events.events.contains {
                        $0.kind == deskaudio_event.DESKAUDIO_EVENT_APP_STARTED.rawValue && $0.text.contains("ToneD")
                            && $0.text.hasSuffix(": recorded")
                    }
                }, "\(events.events)")
            print("measured: ToneD started mid-capture: heard \(lateMs) ms after the whole-sink capture heard it")
        }

        /// The capture time of the first frame in which `frequency` is above -30 dBFS.
        static func firstFrameTime(_ collector: FrameCollector, holding frequency: Double) throws -> UInt64? {
            let frames = try collector.parsed()
            let decoded = try collector.decoded()
            for (index, frame) in frames.enumerated() where (index + 1) * 960 <= decoded.count {
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
        @Test func theHostsOwnPlaybackIsLeftOutUntilAskedFor() throws {
            func play() throws {
                let other = try ExternalTools.playTone(frequency: 1500, amplitude: 0.3, seconds: 1.5, application: "ToneB")
                try InProcessPlayer.play(frequency: 440, amplitude: 0.3, seconds: 1.5, name: "HostItself")
                other.waitUntilExit()
            }
            let without = try Self.levels(
                try Self.captureApps(.DESKAUDIO_APPS_ALL_EXCEPT, []) { try play() }, [440, 1500], reference: 1500)
            #expect(abs(without[1] - quietSineLevel) <= 1, "ToneB at \(without[1]) dBFS")
            #expect(without[0] < without[1] - 60, "the host's own 440 Hz at \(without[0]) dBFS")
            let with = try Self.levels(
                try Self.captureApps(.DESKAUDIO_APPS_ALL_EXCEPT, [], includeOwnProcess: true) { try play() }, [440, 1500],
                reference: 1500)
            #expect(abs(with[0] - quietSineLevel) <= 1 && abs(with[1] - quietSineLevel) <= 1, "\(with)")
            print("measured: host's own 440 Hz left out: \(without[0]) dBFS; put back in: \(with[0]) dBFS")
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
            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 1.5, application: "ToneA")
            defer { player.waitUntilExit() }
            Thread.sleep(forTimeInterval: 0.5)
            let listing = Listing()
            let count = deskaudio_list_apps(
                { name, binary, pid, _, running, userData in
                    Unmanaged<Listing>.fromOpaque(userData!).takeUnretainedValue().entries.append(
                        (String(cString: name!), String(cString: binary!), pid, running))
                }, Unmanaged.passUnretained(listing).toOpaque())
            #expect(count == Int32(listing.entries.count) && count >= 1, "\(Self.lastError())")
            let toneA = listing.entries.first { $0.name == "ToneA" }
            #expect(toneA?.binary == "pacat" && toneA?.pid == player.processIdentifier && toneA?.running == true,
                "\(listing.entries)")
        }

        @Test func aSelectionThroughThePulseAudioAPIIsRefusedNotWidened() throws {
            let capture = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(capture) }
            #expect(deskaudio_capture_set_backend(capture, "pulse") == 0)
            #expect(Self.setApps(capture, .DESKAUDIO_APPS_ONLY, ["ToneA"]) == 0, "stored while stopped")
            #expect(deskaudio_capture_enable(capture, false, true) == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue)
            #expect(Self.lastError().contains("without muting the host needs the PipeWire backend"), "\(Self.lastError())")
            #expect(String(cString: deskaudio_capture_backend(capture)!) == "", "nothing left capturing")
            #expect(Self.setApps(capture, .DESKAUDIO_APPS_ALL, []) == 0)
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "the whole monitor works there")
            #expect(
                Self.setApps(capture, .DESKAUDIO_APPS_ALL_EXCEPT, ["ToneA"])
                    == deskaudio_status.DESKAUDIO_ERROR_NOT_SUPPORTED.rawValue, "switching while capturing")
            #expect(String(cString: deskaudio_capture_backend(capture)!) == "", "app audio stopped, not widened")
            #expect(deskaudio_set_mute_host(false) == 0, "the default capture, stopped")
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
