// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DeskAudio",
    products: [
        /// The shared library hosts link, C ABI declared in include/deskaudio.h. SwiftPM names
        /// it libdeskaudio-c.so; scripts/install installs it as libdeskaudio.so.
        .library(name: "deskaudio-c", type: .dynamic, targets: ["DeskAudioC"]),
        /// The Swift API of the audio core, for Swift hosts and the benchmarks in Benchmarks/.
        .library(name: "DeskAudio", targets: ["DeskAudio"]),
        /// Writes include/deskaudio.h from the C ABI layer's Swift sources.
        .executable(name: "deskaudio-header", targets: ["deskaudio-header"]),
        /// The command-line tool: lists devices, records Ogg Opus files, shows levels, serves
        /// the web player.
        .executable(name: "deskaudio", targets: ["DeskAudioCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // HTTP and WebSocket for `deskaudio serve --web`: the tool's only, never libdeskaudio.so's.
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
    ],
    targets: [
        // System libraries, found through pkg-config; apt names the Debian packages.
        .systemLibrary(name: "COpus", pkgConfig: "opus", providers: [.apt(["libopus-dev"])]),
        .systemLibrary(
            name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        // libpulse's headers, and the table its functions are called through once it is
        // loaded with dlopen (not linked: a host on PipeWire never maps it). libpulse-dev.
        .target(name: "CPulse"),
        .systemLibrary(name: "COgg", pkgConfig: "ogg", providers: [.apt(["libogg-dev"])]),
        .systemLibrary(
            name: "CSpeexDSP", pkgConfig: "speexdsp", providers: [.apt(["libspeexdsp-dev"])]),

        // Only what Swift cannot call itself: libopus's variadic ctl requests and PipeWire's
        // macro-only methods.
        .target(name: "DeskAudioShim", dependencies: ["COpus", "CPipeWire"]),

        // The audio core: capture → pipeline → wire. Glibc only, no Foundation.
        .target(
            name: "DeskAudio",
            dependencies: ["COpus", "CPipeWire", "CPulse", "CSpeexDSP", "DeskAudioShim"]
        ),

        // The C ABI's structs, in C so the C compiler fixes their layout.
        .target(name: "DeskAudioCTypes"),

        // The thin C ABI layer: converts and validates, holds no audio logic.
        .target(name: "DeskAudioC", dependencies: ["DeskAudio", "DeskAudioCTypes"]),

        .executableTarget(name: "deskaudio-header"),

        // The `deskaudio` tool, on the Swift API; libogg writes its files.
        .executableTarget(
            name: "DeskAudioCLI",
            dependencies: [
                "DeskAudio", "DeskAudioC", "COgg", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"), .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),

        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(
            name: "DeskAudioTests", dependencies: ["DeskAudio", "DeskAudioC", "DeskAudioCTypes", "DeskAudioCLI", "TestSupport"]),
        .testTarget(
            name: "IntegrationTests", dependencies: ["DeskAudioC", "DeskAudioCTypes", "DeskAudio", "TestSupport"]),
    ]
)
