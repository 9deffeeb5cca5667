import DeskAudio
import DeskAudioC
import Foundation
import TestSupport
import Testing

extension RealServerTests {
    /// "Why is it silent?" (deskaudio_capture_diagnose, deskaudio doctor) against the rigs in
    /// the states users report: all well, the default sink muted, the app on another sink, no
    /// server at all.
    @Suite struct DoctorTests {
        /// The findings of deskaudio_capture_diagnose through `backend`, as "ok|warning|problem: line".
        static func diagnose(_ backend: String) -> (problems: Int32, lines: [String]) {
            let capture = deskaudio_capture_create()
            defer { deskaudio_capture_destroy(capture) }
            #expect(deskaudio_capture_set_backend(capture, backend) == 0)
            return diagnose(capture)
        }

        /// The findings of deskaudio_capture_diagnose on `capture`, listening 500 ms.
        static func diagnose(_ capture: deskaudio_capture?) -> (problems: Int32, lines: [String]) {
            final class Lines: @unchecked Sendable { var all: [String] = [] }
            let lines = Lines()
            let problems = deskaudio_capture_diagnose(
                capture, 500,
                { finding, line, userData in
                    let label = ["ok", "warning", "problem"][Int(finding)]
                    Unmanaged<Lines>.fromOpaque(userData!).takeUnretainedValue().all.append("\(label): \(String(cString: line!))")
                }, Unmanaged.passUnretained(lines).toOpaque())
            return (problems, lines.all)
        }

        /// Runs `body` with ToneA playing 440 Hz to `sink` (nil: the default) on `environment`'s server.
        static func withToneA(sink: String? = nil, _ environment: [String: String], _ body: () throws -> Void) throws {
            let player = try ExternalTools.playTone(
                frequency: 440, amplitude: 0.3, seconds: 3, device: sink, application: "ToneA", environment: environment)
            defer {
                player.terminate()
                player.waitUntilExit()
            }
            Thread.sleep(forTimeInterval: 0.5)
            try body()
        }

        @Test func allWellIsAllOkWithTheLevels() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                try Self.withToneA(environment) {
                    let (problems, lines) = Self.diagnose(backend)
                    #expect(problems == 0, "\(path): \(lines)")
                    #expect(lines.first?.hasPrefix("ok: backend \(backend): ") == true, "\(path): \(lines)")
                    #expect(lines.contains { $0.hasPrefix("ok: default sink deskaudio_sink") }, "\(path): \(lines)")
                    #expect(lines.contains { $0.hasPrefix("ok: ToneA (pid ") && $0.contains("playing") }, "\(path): \(lines)")
                    #expect(lines.contains("ok: the microphone records deskaudio_mic"), "\(path): \(lines)")
                    let app = lines.first { $0.hasPrefix("ok: app audio: peak ") }
                    #expect(app?.contains("peak -10.") == true, "\(path): a 0.3 sine peaks at -10.5 dBFS: \(lines)")
                    #expect(lines.last?.hasPrefix("ok: zero gate open") == true, "\(path): \(lines)")
                }
            }
        }

        @Test func aMutedDefaultSinkIsNamedWithTheFix() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                _ = try ExternalTools.run(["pactl", "set-sink-mute", "deskaudio_sink", "1"], environment: environment)
                defer { _ = try? ExternalTools.run(["pactl", "set-sink-mute", "deskaudio_sink", "0"], environment: environment) }
                try Self.withToneA(environment) {
                    let (_, lines) = Self.diagnose(backend)
                    #expect(
                        lines.contains {
                            $0.hasPrefix("warning: the default sink deskaudio_sink is muted")
                                && $0.hasSuffix("(pactl set-sink-mute deskaudio_sink 0)")
                        }, "\(path): \(lines)")
                }
            }
        }

        @Test func anAppOnAnotherSinkIsNamedWithTheFix() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                try Self.withToneA(sink: "deskaudio_other", environment) {
                    let (_, lines) = Self.diagnose(backend)
                    #expect(
                        lines.contains {
                            $0.hasPrefix("warning: ToneA (pid ") && $0.contains("to deskaudio_other, not the default sink")
                                && $0.contains("--device deskaudio_other")
                        }, "\(path): \(lines)")
                    #expect(
                        lines.contains { $0.hasPrefix("warning: app audio is digital silence") }, "\(path): \(lines)")
                }
            }
        }

        @Test func aSuspendedDefaultSinkIsNamed() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                _ = try ExternalTools.run(["pactl", "suspend-sink", "deskaudio_sink", "1"], environment: environment)
                defer { _ = try? ExternalTools.run(["pactl", "suspend-sink", "deskaudio_sink", "0"], environment: environment) }
                let (_, lines) = Self.diagnose(backend)
                #expect(lines.contains { $0.hasPrefix("warning: the default sink deskaudio_sink is suspended") }, "\(path): \(lines)")
                #expect(lines.contains("warning: no application is playing: there is nothing to hear yet"), "\(path): \(lines)")
            }
        }

        @Test func aMonitorAsTheDefaultSourceIsNamedWithTheFix() throws {
            try MuteHostTests.onEachPath { path, backend, environment in
                _ = try ExternalTools.run(["pactl", "set-default-source", "deskaudio_other.monitor"], environment: environment)
                defer { _ = try? ExternalTools.run(["pactl", "set-default-source", "deskaudio_mic"], environment: environment) }
                let named = waitUntil(seconds: 2) {
                    (try? ExternalTools.run(["pactl", "get-default-source"], environment: environment).output)?
                        .hasPrefix("deskaudio_other.monitor") == true
                }
                try #require(named, "\(path): the default source switched")
                let (_, lines) = Self.diagnose(backend)
                #expect(
                    lines.contains {
                        // (PipeWire names a sink's monitor as the sink itself)
                        $0.hasPrefix("warning: the default source deskaudio_other")
                            && $0.contains(" is a sink's monitor, not a microphone")
                            && $0.hasSuffix("(pactl set-default-source NAME)")
                    }, "\(path): \(lines)")
            }
        }

        @Test func aServerWithNoSinkIsAProblemWithTheFix() throws {
            try EnsureSinkTests.withBareServer { _ in
                for backend in ["pipewire", "pulse"] {
                    let (problems, lines) = Self.diagnose(backend)
                    #expect(problems >= 1, "\(backend): \(lines)")
                    #expect(
                        lines.contains {
                            $0.hasPrefix("problem: no default sink: applications have nowhere to play")
                                && $0.contains("pactl load-module module-null-sink")
                        }, "\(backend): \(lines)")
                }
            }
        }

        /// The host's own capture, app audio with nothing playing for longer than the gate's
        /// 800 frames: the last finding says its gate is closed; with a tone, what it sent.
        @Test func theHostCapturesClosedZeroGateIsNamed() throws {
            let frames = FrameCollector()
            let capture = try #require(deskaudio_capture_create())
            defer {
                deskaudio_capture_destroy(capture)
                withExtendedLifetime(frames) {}
            }
            #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, frames.userData) == 0)
            #expect(deskaudio_capture_set_backend(capture, "pipewire") == 0)
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(AppRoutingTests.lastError())")
            Thread.sleep(forTimeInterval: 8.6)
            let (_, closed) = Self.diagnose(capture)
            #expect(
                closed.last?.hasPrefix("warning: your capture's zero gate is closed: all ") == true
                    && closed.last?.contains("digital silence") == true, "\(closed)")
            try Self.withToneA([:]) {
                let (_, open) = Self.diagnose(capture)
                #expect(open.last?.hasPrefix("ok: your capture (pipewire) sent ") == true, "\(open)")
            }
        }

        @Test func noServerIsAProblemThatNamesTheSocketsTried() throws {
            let result = try ExternalTools.run(
                [commandLineTool, "doctor", "--listen-ms", "100"], environment: ["XDG_RUNTIME_DIR": "/nonexistent"])
            #expect(result.status == 1, "\(result)")
            #expect(
                result.output.hasPrefix("problem: no audio server answered")
                    && result.output.contains("sockets tried: PipeWire /nonexistent/pipewire-0, PulseAudio /nonexistent/pulse/native"),
                "\(result.output)")
        }
    }
}
