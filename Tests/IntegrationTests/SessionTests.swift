import DeskAudio
import DeskAudioC
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// A host that runs as a system service: this test process (root) captures the desktop
    /// session of an unprivileged user the test makes, whose own PipeWire (with WirePlumber
    /// and pipewire-pulse) runs in /run/user/UID, started as that user.
    @Suite struct SessionTests {
        static let userName = "deskaudio-session"

        /// The user's uid, made if missing.
        static func sessionUser() throws -> (uid: UInt32, home: String) {
            if getpwnam(userName) == nil {
                let made = try ExternalTools.run(["useradd", "--create-home", "--shell", "/bin/sh", userName])
                try #require(made.status == 0, "useradd: \(made.error)")
            }
            let entry = try #require(getpwnam(userName)).pointee
            return (entry.pw_uid, String(cString: entry.pw_dir))
        }

        /// Runs `arguments` as the session's user, in their session's environment.
        static func asUser(_ arguments: [String], uid: UInt32, home: String) -> [String] {
            ["runuser", "-u", userName, "--", "env", "HOME=\(home)", "XDG_RUNTIME_DIR=/run/user/\(uid)",
             "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/\(uid)/bus"] + arguments
        }

        /// On the user's PipeWire (native and through pipewire-pulse) and on a PulseAudio
        /// daemon of theirs (which lets root in with the user's cookie).
        @Test func aRootHostCapturesAnotherUsersSessionWithoutEnvironmentVariables() throws {
            try #require(geteuid() == 0, "the system-service case: the test runs as root, as CI does")
            let (uid, home) = try Self.sessionUser()
            let tone = FileManager.default.temporaryDirectory.appendingPathComponent("deskaudio-session-tone.f32")
            try SignalAnalysis.sine(frequency: 440, amplitude: 0.3, frames: 72_000).withUnsafeBytes { Data($0) }
                .write(to: tone)
            defer { try? FileManager.default.removeItem(at: tone) }
            // The rig script where the user can run it, wherever this checkout lives.
            let script = FileManager.default.temporaryDirectory.appendingPathComponent("deskaudio-audio-rig-\(getpid())").path
            try? FileManager.default.removeItem(atPath: script)
            try FileManager.default.copyItem(atPath: audioRig, toPath: script)
            chmod(script, 0o755)
            defer { try? FileManager.default.removeItem(atPath: script) }
            for (server, backends) in [("pipewire", ["pipewire", "pulse"]), ("pulseaudio", ["pulse"])] {
                let runtime = "/run/user/\(uid)"
                // What logind does at login: the user's runtime directory, theirs alone.
                mkdir("/run/user", 0o755)
                mkdir(runtime, 0o700)
                #expect(chown(runtime, uid, uid) == 0 && chmod(runtime, 0o700) == 0)
                defer { _ = system("rm -rf '\(runtime)'") }  // and at logout
                // libc's system(): the rig's daemons outlive the script and keep any pipe open.
                func rig(_ arguments: [String]) -> Int32 {
                    system(Self.asUser([script] + arguments, uid: uid, home: home).joined(separator: " ") + " >/dev/null 2>&1")
                }
                let started = rig(["start", runtime, server])
                try #require(started == 0, "the user's \(server): audio-rig start exited with \(started)")
                defer { _ = rig(["stop", runtime]) }
                // The second round chooses the user as logind's active one: the seat file as
                // systemd-logind writes it, where no logind runs (a container, as in CI).
                let seat = "/run/systemd/seats/seat0"
                let asLogind = server == "pulseaudio" && access(seat, F_OK) != 0
                if asLogind {
                    try FileManager.default.createDirectory(atPath: "/run/systemd/seats", withIntermediateDirectories: true)
                    try "IS_SEAT0=1\nCAN_MULTI_SESSION=1\nACTIVE=c1\nACTIVE_UID=\(uid)\nSESSIONS=c1\nUIDS=\(uid)\n"
                        .write(toFile: seat, atomically: true, encoding: .utf8)
                }
                defer { if asLogind { unlink(seat) } }
                let chosen = asLogind ? deskaudio_set_session_active() : deskaudio_set_session(Int64(uid))
                #expect(chosen == (asLogind ? Int32(uid) : 0), "\(server): \(AppRoutingTests.lastError())")
                defer { #expect(deskaudio_set_session(-1) == 0) }

                for backend in backends {
                    let capture = try #require(deskaudio_capture_create())
                    defer { deskaudio_capture_destroy(capture) }
                    let frames = FrameCollector()
                    #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, frames.userData) == 0)
                    #expect(deskaudio_capture_set_backend(capture, backend) == 0)
                    #expect(
                        deskaudio_capture_enable(capture, false, true) == 0, "\(server), \(backend): \(AppRoutingTests.lastError())")
                    let player = try ExternalTools.run(
                        Self.asUser(
                            ["pacat", "--playback", "--raw", "--format=float32le", "--rate=48000", "--channels=2",
                             "--client-name=ToneA", tone.path], uid: uid, home: home))
                    #expect(player.status == 0, "\(server), \(backend): the user's player: \(player.error)")
                    Thread.sleep(forTimeInterval: 0.2)
                    #expect(deskaudio_capture_enable(capture, false, false) == 0)
                    let level = try AppRoutingTests.levels(frames, [440], steady: [440])[0]
                    #expect(abs(level - quietSineLevel) <= 1, "\(server), \(backend): the user's tone at \(level) dBFS")
                    print(
                        "measured: root capturing user \(uid)'s \(server) through \(backend)"
                            + "\(asLogind ? " (chosen as logind's active user)" : ""): 440 Hz at \(level) dBFS")
                }
                // The process's own environment still points at the test rig, untouched.
                #expect(ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] != runtime)
            }
        }

        @Test func aUserWithoutASessionOrNoUserAtAllIsRefusedClearly() {
            #expect(deskaudio_set_session(4_000_000_000) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            #expect(AppRoutingTests.lastError() == "no user has uid 4000000000")
            #expect(deskaudio_set_session(-2) == deskaudio_status.DESKAUDIO_ERROR_INVALID_ARGUMENT.rawValue)
            // nobody (65534) exists and is never logged in.
            #expect(deskaudio_set_session(65534) == deskaudio_status.DESKAUDIO_ERROR_NO_SERVER.rawValue)
            #expect(AppRoutingTests.lastError().contains("no runtime directory /run/user/65534"), "\(AppRoutingTests.lastError())")
            #expect(SessionTarget.user == nil, "a refused choice changes nothing")
        }
    }
}
