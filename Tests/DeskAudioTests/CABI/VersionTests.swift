import DeskAudio
import DeskAudioC
import Testing

/// The run-time version functions agree with the macros the header carries.
@Suite struct VersionTests {
    @Test func runTimeVersionMatchesTheHeaderMacros() throws {
        let text = String(cString: try #require(deskaudio_version()))
        #expect(text == "\(DESKAUDIO_VERSION_MAJOR).\(DESKAUDIO_VERSION_MINOR).\(DESKAUDIO_VERSION_PATCH)")
        #expect(
            deskaudio_version_number()
                == DESKAUDIO_VERSION_MAJOR * 10000 + DESKAUDIO_VERSION_MINOR * 100 + DESKAUDIO_VERSION_PATCH)
        #expect(deskaudio_abi_version() == DESKAUDIO_ABI_VERSION)
    }
}

/// The header's constants agree with the library's.
@Suite struct HeaderConstantTests {
    @Test func theQueueBoundIsTheLibrarys() {
        #expect(Int(DESKAUDIO_QUEUE_FRAMES) == AudioService.frameQueueCapacity)
    }
}
