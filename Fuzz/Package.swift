// swift-tools-version: 6.0
// libFuzzer targets for DeskAudio's entry points that take bytes from outside, kept in their
// own package: they build only with `--sanitize=fuzzer` (libFuzzer supplies `main`).
//
//   scripts/fuzz [SECONDS]      each target for SECONDS (CI: 60) from corpus/, with ASan
import PackageDescription

// SwiftPM names a path dependency after its folder: the checkout's, whatever it is called.
let deskAudioPackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let fuzzTarget = { (name: String) in
    Target.executableTarget(
        name: name,
        dependencies: [.product(name: "deskaudio-c", package: deskAudioPackage)],
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let package = Package(
    name: "DeskAudioFuzz",
    dependencies: [.package(path: "..")],
    targets: [
        // AudioFrame bytes into deskaudio_parse_frame and AudioFrameParser.
        fuzzTarget("FuzzFrameParser"),
        // A sequence of AudioFrames into one deskaudio decoder.
        fuzzTarget("FuzzDecoder"),
        // deskaudio_push_pcm with arbitrary formats, channel counts, rates and sizes.
        fuzzTarget("FuzzPushPCM"),
        // AudioFrames arriving in any order, at any times, between pulls of a jitter buffer.
        fuzzTarget("FuzzJitterBuffer"),
        // AudioFrames of any bytes into an RTP packetizer, with any room for the packet.
        fuzzTarget("FuzzRTPPacketizer"),
    ]
)
