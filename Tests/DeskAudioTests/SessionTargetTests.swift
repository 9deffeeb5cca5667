import Foundation
import Testing

@testable import DeskAudio

/// The session a system-service host chooses: logind's seat file read, bad choices refused.
@Suite struct SessionTargetTests {
    static func seatFile(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("deskaudio-seat-\(UUID().uuidString)").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func theActiveUserIsReadFromLogindsSeatFile() throws {
        // As systemd-logind writes /run/systemd/seats/seat0.
        let path = try Self.seatFile("# This is private data. Do not parse.\nIS_SEAT0=1\nCAN_MULTI_SESSION=1\nACTIVE=2\nACTIVE_UID=1000\nSESSIONS=2 c1\nUIDS=1000 120\n")
        defer { unlink(path) }
        #expect(try SessionTarget.activeSeatUser(seatFile: path) == 1000)
    }

    @Test func noSeatFileOrNoActiveUserIsAClearError() throws {
        #expect(throws: DeskAudioError.notSupported("no logind seat here (/nonexistent/seat0 missing): give the user's uid instead")) {
            try SessionTarget.activeSeatUser(seatFile: "/nonexistent/seat0")
        }
        let path = try Self.seatFile("IS_SEAT0=1\nCAN_MULTI_SESSION=1\n")
        defer { unlink(path) }
        #expect(throws: DeskAudioError.noServer("logind has no active session on seat0 (nobody is logged in at the machine)")) {
            try SessionTarget.activeSeatUser(seatFile: path)
        }
    }

    @Test func anUnknownUserIsRefusedAndChangesNothing() {
        #expect(throws: DeskAudioError.invalidArgument("no user has uid 4000000000")) {
            try SessionTarget.choose(uid: 4_000_000_000)
        }
        #expect(SessionTarget.user == nil)
    }
}
