import DeskAudio

//# 4. Devices and apps: what the server has, which device or applications to record, the doctor

/// How much a finding of deskaudio_diagnose() matters.
public enum deskaudio_finding: Int32, CaseIterable {
    /// As it should be.
    case DESKAUDIO_FINDING_OK = 0
    /// May explain silence; the line says what to do.
    case DESKAUDIO_FINDING_WARNING = 1
    /// Explains silence; the line says what to do.
    case DESKAUDIO_FINDING_PROBLEM = 2
}

/// Called by deskaudio_diagnose() once per finding, in the order of the checks: `finding` is
/// a deskaudio_finding, `line` one English line (what was found and, unless it is fine, the
/// fix), valid only during the call.
public typealias deskaudio_diagnose_callback =
    @convention(c) (_ finding: Int32, _ line: UnsafePointer<CChar>?, _ user_data: UnsafeMutableRawPointer?) -> Void

/// "Why is it silent?": checks, in order, whether an audio server is reachable (naming the
/// sockets tried), the backend and server version, the default sink (muted, at 0 % volume,
/// suspended), which applications play and to which sink, what app audio and the
/// microphone record, their levels over `listen_ms` (0: 1000; at most 10000) of capture,
/// and what the zero gate did meanwhile; while `capture` captures, a last finding says what
/// it sent meanwhile (its zero gate closed, or no frames arriving). Calls `callback` once
/// per finding on the calling thread before it returns. Uses `capture`'s backend choice and
/// a capture of its own (`capture` itself is left alone). Returns the number of
/// DESKAUDIO_FINDING_PROBLEM findings, or a negative deskaudio_status. Blocks for the
/// listen plus up to 3 s per server query. Not callable from inside a frame callback.
/// - Parameters:
///   - capture: the capture (NULL: DESKAUDIO_ERROR_INVALID_ARGUMENT).
///   - listen_ms: how long to listen to the sources, ms: 0 (1000) to 10000.
///   - callback: called once per finding, on the calling thread (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the number of DESKAUDIO_FINDING_PROBLEM findings (0: all well), or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_capture_diagnose")
public func deskaudio_capture_diagnose(
    _ capture: deskaudio_capture?, _ listen_ms: Int32, _ callback: deskaudio_diagnose_callback?,
    _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    guard let callback else { return invalidArgument("diagnose callback is NULL") }
    guard (0...10_000).contains(listen_ms) else { return invalidArgument("listen_ms \(listen_ms) is outside 0…10000") }
    return withCapture(capture) { service in
        guard !service.isInsideFrameHandler else {
            return status { () throws(DeskAudioError) in throw .wrongThread("diagnose from inside the frame callback") }
        }
        let findings = Diagnosis.run(
            backend: service.requestedBackend, listenMs: listen_ms == 0 ? 1000 : Int(listen_ms), host: service)
        for finding in findings { callback(finding.severity.rawValue, finding.text, user_data) }
        return Int32(findings.filter { $0.severity == .problem }.count)
    }
}

/// deskaudio_capture_diagnose() with the default capture's backend choice.
/// - Parameters:
///   - listen_ms: how long to listen to the sources, ms: 0 (1000) to 10000.
///   - callback: called once per finding, on the calling thread (not NULL).
///   - user_data: passed back to `callback` untouched.
/// - Returns: the number of DESKAUDIO_FINDING_PROBLEM findings (0: all well), or a negative deskaudio_status.
// C: warn_unused_result
@_cdecl("deskaudio_diagnose")
public func deskaudio_diagnose(
    _ listen_ms: Int32, _ callback: deskaudio_diagnose_callback?, _ user_data: UnsafeMutableRawPointer?
) -> Int32 {
    deskaudio_capture_diagnose(defaultHandle, listen_ms, callback, user_data)
}
