import DeskAudio
import DeskAudioC
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// A server with no sink at all (no sound card): `scripts/audio-rig start DIR pipewire-bare`,
    /// PipeWire with WirePlumber and pipewire-pulse, its module-always-sink unloaded.
    /// deskaudio_capture_set_ensure_sink() makes a virtual sink while app audio captures.
    @Suite struct EnsureSinkTests {
        /// Runs `body` with this process and the players pointed at a bare rig of its own.
        static func withBareServer(_ body: ([String: String]) throws -> Void) throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("deskaudio-bare-\(getpid())").path
            let started = system("'\(audioRig)' start '\(directory)' pipewire-bare >/dev/null 2>&1")
            try #require(started == 0, "audio-rig start pipewire-bare exited with \(started)")
            defer { _ = system("'\(audioRig)' stop '\(directory)' >/dev/null 2>&1") }
            let previous = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
            setenv("XDG_RUNTIME_DIR", directory, 1)
            defer { if let previous { setenv("XDG_RUNTIME_DIR", previous, 1) } else { unsetenv("XDG_RUNTIME_DIR") } }
            try body(["XDG_RUNTIME_DIR": directory])
        }

        static func sinks(_ environment: [String: String]) throws -> [String] {
            try ExternalTools.run(["pactl", "list", "short", "sinks"], environment: environment).output
                .split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
        }

        @Test func aVirtualSinkLetsTheViewerHearAServerWithNoSoundCardAndGoesWithTheCapture() throws {
            try Self.withBareServer { environment in
                for (backend, prefix) in [("pipewire", "deskaudio-virtual-"), ("pulse", "deskaudio_virtual_")] {
                    #expect(try Self.sinks(environment).isEmpty, "\(backend): no sink to start with")
                    let capture = try #require(deskaudio_capture_create())
                    defer { deskaudio_capture_destroy(capture) }
                    let frames = FrameCollector()
                    let notices = NoticeCollector()
                    #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, frames.userData) == 0)
                    #expect(deskaudio_capture_set_event_callback(capture, NoticeCollector.onEvent, notices.userData) == 0)
                    #expect(deskaudio_capture_set_backend(capture, backend) == 0)
                    #expect(deskaudio_capture_set_ensure_sink(capture, true) == 0)
                    #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(AppRoutingTests.lastError())")
                    let made = try Self.sinks(environment)
                    #expect(made.count == 1 && made[0].hasPrefix("\(prefix)\(getpid())"), "\(backend): \(made)")
                    let defaultSink = try ExternalTools.run(["pactl", "get-default-sink"], environment: environment).output
                    #expect(defaultSink.trimmingCharacters(in: .whitespacesAndNewlines) == made.first, "\(backend)")
                    try ExternalTools.playTone(
                        frequency: 440, amplitude: 0.3, seconds: 1.5, application: "ToneA", environment: environment
                    ).waitUntilExit()
                    Thread.sleep(forTimeInterval: 0.2)
                    #expect(deskaudio_capture_enable(capture, false, false) == 0)
                    let stoppedAt = Date()
                    #expect(waitUntil(seconds: 1) { (try? Self.sinks(environment))?.isEmpty == true }, "\(backend): gone")
                    let goneMs = Date().timeIntervalSince(stoppedAt) * 1000
                    #expect(
                        notices.events.contains {
                            $0.kind == deskaudio_event.DESKAUDIO_EVENT_DEVICE_CHANGED.rawValue && $0.text.contains(prefix)
                        }, "\(backend): \(notices.events)")
                    let level = try AppRoutingTests.levels(frames, [440], steady: [440])[0]
                    #expect(abs(level - quietSineLevel) <= 1, "\(backend): ToneA at \(level) dBFS")
                    print("measured: no sink, \(backend): \(made.first ?? "?") made, ToneA heard at \(level) dBFS, gone \(goneMs) ms after the stop")
                }
            }
        }

        @Test func aKilledHostsVirtualSinkGoesWithItOnPipeWireAndAtTheNextStartThroughThePulseAudioAPI() throws {
            try Self.withBareServer { environment in
                for backend in ["pipewire", "pulse"] {
                    let (host, _, _) = try ExternalTools.start(
                        [commandLineTool, "record", "--ensure-sink", "--backend", backend, "--seconds", "30", "/dev/null"],
                        environment: environment)
                    #expect(waitUntil(seconds: 3) { (try? Self.sinks(environment))?.count == 1 }, "\(backend): made")
                    kill(host.processIdentifier, SIGKILL)
                    host.waitUntilExit()
                    let killedAt = Date()
                    if backend == "pipewire" {
                        #expect(waitUntil(seconds: 1) { (try? Self.sinks(environment))?.isEmpty == true }, "gone with it")
                        print("measured: no sink, pipewire: the killed host's sink gone \(Date().timeIntervalSince(killedAt) * 1000) ms after the kill")
                        continue
                    }
                    Thread.sleep(forTimeInterval: 0.5)
                    let left = try Self.sinks(environment)
                    #expect(left.count == 1, "a loaded module outlives its client: \(left)")
                    // The next capture start on that server unloads it (this one fails: no sink).
                    let next = try #require(deskaudio_capture_create())
                    defer { deskaudio_capture_destroy(next) }
                    #expect(deskaudio_capture_set_backend(next, backend) == 0)
                    #expect(deskaudio_capture_enable(next, false, true) != 0, "no sink, no ensure: nothing to record")
                    #expect(try Self.sinks(environment).isEmpty, "the leftover is unloaded")
                }
            }
        }

        @Test func theDoctorNamesTheMissingSink() throws {
            try Self.withBareServer { _ in
                let (problems, lines) = DoctorTests.diagnose("pipewire")
                #expect(problems >= 1 && lines.contains { $0.hasPrefix("problem: no default sink") }, "\(lines)")
            }
        }
    }
}
