// swift-tools-version: 6.1
// DeskAudio's benchmarks (ordo-one/benchmark, with its malloc counter), kept in their own
// package so that the library's build never resolves or builds the benchmark tooling.
//
//   cd Benchmarks && swift package benchmark          (or: scripts/bench)
import PackageDescription

// SwiftPM names a path dependency after its folder: the checkout's, whatever it is called.
let deskAudioPackage = String(Context.packageDirectory.split(separator: "/").dropLast().last ?? "main").lowercased()

let package = Package(
    name: "DeskAudioBenchmarks",
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // libopus called directly: the baseline the pipeline is measured against.
        .target(name: "RawOpus", linkerSettings: [.linkedLibrary("opus")]),
        .executableTarget(
            name: "PipelineBenchmarks",
            dependencies: [
                .product(name: "DeskAudio", package: deskAudioPackage),
                "RawOpus",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/PipelineBenchmarks",
            swiftSettings: [.swiftLanguageMode(.v5)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
