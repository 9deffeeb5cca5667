import Glibc

/// Whose desktop session the library's connections go to. By default the calling process's
/// own, as libpipewire and libpulse find it (XDG_RUNTIME_DIR, PIPEWIRE_REMOTE, PULSE_SERVER).
/// A host that runs as a system service (root, or a user of its own) chooses a user instead:
/// every connection made from then on goes to the PipeWire socket and the PulseAudio socket
/// in that user's runtime directory, with that user's PulseAudio cookie, and the process's
/// environment is left alone. Process-wide: every capture and every query.
public enum SessionTarget {
    /// A user's session as the connections reach it.
    public struct User: Sendable, Equatable {
        /// The user's id.
        public var uid: UInt32
        /// Their runtime directory, where the servers' sockets are (`/run/user/UID`).
        public var runtimeDirectory: String
        /// Their home directory, where PulseAudio keeps its cookie.
        public var home: String

        /// The PipeWire daemon's socket.
        var pipeWireSocket: String { "\(runtimeDirectory)/pipewire-0" }
        /// The PulseAudio server (or pipewire-pulse) as libpulse names it.
        var pulseServer: String { "unix:\(runtimeDirectory)/pulse/native" }
        /// The PulseAudio cookie that authenticates a client of another user.
        var pulseCookie: String { "\(home)/.config/pulse/cookie" }
    }

    private static let chosen = LockedValue<User?>(nil)

    /// The user chosen, nil for the process's own environment.
    public static var user: User? { chosen.withLock { $0 } }

    /// From now on, connections go to the session of the user `uid` (its runtime directory
    /// `/run/user/UID`, as logind makes it, must exist); nil: back to the environment.
    /// Streams running keep the server they have.
    public static func choose(uid: UInt32?) throws(DeskAudioError) {
        guard let uid else { return chosen.withLock { $0 = nil } }
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(uid, &entry, &buffer, buffer.count, &found) == 0, found != nil, let home = entry.pw_dir else {
            throw .invalidArgument("no user has uid \(uid)")
        }
        let runtime = "/run/user/\(uid)"
        var status = stat()
        guard stat(runtime, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR else {
            throw .noServer("user \(uid) has no runtime directory \(runtime): not logged in (no session to capture)")
        }
        let user = User(uid: uid, runtimeDirectory: runtime, home: String(cString: home))
        chosen.withLock { $0 = user }
    }

    /// The user of the active session on seat0, as logind records it
    /// (`/run/systemd/seats/seat0`, `ACTIVE_UID=`): the one sitting at the machine.
    public static func activeSeatUser() throws(DeskAudioError) -> UInt32 {
        try activeSeatUser(seatFile: "/run/systemd/seats/seat0")
    }

    /// The `ACTIVE_UID=` of logind's seat file `path`.
    static func activeSeatUser(seatFile path: String) throws(DeskAudioError) -> UInt32 {
        guard let file = fopen(path, "r") else {
            throw .notSupported("no logind seat here (\(path) missing): give the user's uid instead")
        }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, Int32(line.count), file) != nil {
            let text = line.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            guard text.hasPrefix("ACTIVE_UID=") else { continue }
            guard let uid = UInt32(text.dropFirst("ACTIVE_UID=".count).prefix { $0.isNumber }) else { break }
            return uid
        }
        throw .noServer("logind has no active session on seat0 (nobody is logged in at the machine)")
    }
}
