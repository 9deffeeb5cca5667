import DeskAudio
@testable import DeskAudioC
import Testing

/// The C ABI's enums mirror the core's: same values, and names that are the core's cases
/// in C spelling (`deviceChanged` → `DESKAUDIO_EVENT_DEVICE_CHANGED`), both ways round. A case
/// added on one side only fails here, before a host sees a value its header does not name.
@Suite struct CEnumMirrorTests {
    /// `deviceChanged` → `DEVICE_CHANGED`.
    static func cSpelling(_ swiftName: String) -> String {
        var spelled = ""
        for character in swiftName {
            if character.isUppercase && !spelled.isEmpty { spelled += "_" }
            spelled += character.uppercased()
        }
        return spelled
    }

    /// Each C case as (value, name), against each core case as (value, prefix + C spelling).
    static func expectMirrored<C: CaseIterable & RawRepresentable, Core: CaseIterable & RawRepresentable>(
        _ c: C.Type, _ core: Core.Type, prefix: String
    ) where C.RawValue == Int32, Core.RawValue == Int32 {
        let cCases = C.allCases.map { "\($0.rawValue) \($0)" }
        let coreCases = Core.allCases.map { "\($0.rawValue) \(prefix)\(cSpelling("\($0)"))" }
        #expect(cCases == coreCases)
    }

    @Test func eventsAndLogLevels() {
        CEnumMirrorTests.expectMirrored(deskaudio_event.self, LibraryEvent.self, prefix: "DESKAUDIO_EVENT_")
        CEnumMirrorTests.expectMirrored(deskaudio_log_level.self, LogLevel.self, prefix: "DESKAUDIO_LOG_")
    }

    @Test func deviceKindsAndPCMFormats() {
        CEnumMirrorTests.expectMirrored(deskaudio_device_kind.self, CaptureDevice.Kind.self, prefix: "DESKAUDIO_DEVICE_")
        CEnumMirrorTests.expectMirrored(deskaudio_pcm_format.self, HostPCMInput.SampleFormat.self, prefix: "DESKAUDIO_PCM_")
    }

    @Test func diagnosisFindings() {
        CEnumMirrorTests.expectMirrored(
            deskaudio_finding.self, Diagnosis.Finding.Severity.self, prefix: "DESKAUDIO_FINDING_")
    }

    @Test func backendKinds() {
        let cCases = deskaudio_backend_kind.allCases.map { "\($0.rawValue) \($0)" }
        let coreCases = ["0 DESKAUDIO_BACKEND_NONE"]
            + AudioBackend.allCases.enumerated().map { "\($0.offset + 1) DESKAUDIO_BACKEND_\($0.element.rawValue.uppercased())" }
        #expect(cCases == coreCases)
    }

    @Test func frameFlags() {
        let core: [(String, AudioFrameHeader.Flags)] = [
            ("AFTER_GAP", .afterGap), ("APP", .app), ("MIC", .mic), ("HOST", .host), ("AFTER_LOSS", .afterLoss),
            ("TIME_STEP", .timeStep),
        ]
        #expect(deskaudio_frame_flag.allCases.map { "\($0.rawValue) \($0)" }
            == core.map { "\($0.1.rawValue) DESKAUDIO_FRAME_\($0.0)" })
    }

    /// Every failure the core can report has its own status, and every status but OK is one.
    @Test func everyErrorHasItsOwnStatus() {
        let errors: [DeskAudioError] = [
            .invalidArgument(""), .noServer(""), .streamFailed(""), .timeout(""), .encoderFailed(""),
            .notSupported(""), .wrongThread(""), .outOfResources(""), .noDevice(""),
            .invalidFrame(.truncated(have: 0, need: 0)), .invalidFrame(.oversized(have: 0, limit: 0)),
            .invalidFrame(.wrongMagic), .invalidFrame(.unknownVersion(0)), .invalidFrame(.invalidField("")),
            .bufferTooSmall(""), .formatMismatch(""),
        ]
        let codes = errors.map { deskaudio_status($0).rawValue }
        #expect(Set(codes).count == errors.count)
        #expect(Set(codes) == Set(deskaudio_status.allCases.map(\.rawValue).filter { $0 != 0 }))
    }
}
