import DeskAudio

//# 3. Configuration: encoder, frames, channels, gate; the session served

/// For a host that runs as a system service (as root, or as a user of its own): from now on
/// every capture and query of this process connects to the desktop session of the user
/// `uid`: the PipeWire socket and the PulseAudio socket in their runtime directory
/// (/run/user/UID, which logind makes while they are logged in), with their PulseAudio
/// cookie (~/.config/pulse/cookie) where the server asks for one. The process's environment
/// is neither read for this nor changed. -1 goes back to the process's own environment
/// (XDG_RUNTIME_DIR, PIPEWIRE_REMOTE, PULSE_SERVER). Captures already running keep their
/// server until they are started again. The caller needs the right to open that user's
/// sockets (root has it). Returns DESKAUDIO_OK; DESKAUDIO_ERROR_INVALID_ARGUMENT for a uid
/// no user has or below -1; DESKAUDIO_ERROR_NO_SERVER when the user has no runtime
/// directory (not logged in).
/// - Parameters:
///   - uid: the user whose session to serve; -1: the process's own environment.
/// - Returns: DESKAUDIO_OK, or a negative deskaudio_status.
@_cdecl("deskaudio_set_session")
public func deskaudio_set_session(_ uid: Int64) -> Int32 {
    guard uid >= -1, uid <= Int64(UInt32.max) else { return invalidArgument("uid \(uid) is not a user id or -1") }
    return status { () throws(DeskAudioError) in try SessionTarget.choose(uid: uid == -1 ? nil : UInt32(uid)) }
}

/// deskaudio_set_session() with the user of the active session on seat0, as logind records
/// it: whoever sits at the machine now. Returns that uid, or a negative deskaudio_status:
/// DESKAUDIO_ERROR_NOT_SUPPORTED without logind, DESKAUDIO_ERROR_NO_SERVER when nobody is
/// logged in at the seat. Call it again when the seat's user changes (logind's
/// ActiveSession property).
/// - Returns: the uid now served (0 or more), or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_set_session_active")
public func deskaudio_set_session_active() -> Int32 {
    valueOrStatus { () throws(DeskAudioError) in
        let uid = try SessionTarget.activeSeatUser()
        try SessionTarget.choose(uid: uid)
        return Int32(clamping: uid)
    }
}
