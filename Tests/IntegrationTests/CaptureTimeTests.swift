import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import Glibc
import TestSupport
import Testing

/// Benchmarks/latency/stamp-error.c, built into .build/ by scripts/test: plays bursts through
/// its own PipeWire stream and takes each one's true time at the sink from that stream's
/// graph clock (pw_time), or, with STAMP_PLAYER=pulse on plain PulseAudio, through a
/// PulseAudio stream, from the sink's own account of it (its timing info).
let stampErrorProbe = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent(".build/stamp-error").path

extension RealServerTests {
    /// Frames' capture_time_ns against the true time their sound reached the sink, and the
    /// sample clock → CLOCK_MONOTONIC mapping a host reads (deskaudio_get_clock()).
    @Suite struct CaptureTimeTests {
        /// The probe's three result lines, as numbers by key.
        struct ProbeResult {
            var values: [String: Double] = [:]

            init(_ output: String) {
                for line in output.split(separator: "\n")
                where line.hasPrefix("stamp_ms ") || line.hasPrefix("steps ") || line.hasPrefix("clock ") {
                    let prefix = line.split(separator: " ")[0]
                    for field in line.split(separator: " ").dropFirst() {
                        let pair = field.split(separator: "=", maxSplits: 1)
                        if pair.count == 2, let value = Double(pair[1]) { values["\(prefix).\(pair[0])"] = value }
                    }
                }
            }

            subscript(_ key: String) -> Double { values[key] ?? .nan }

            /// Bursts the capture delivered, with a true time to judge them by or not.
            var bursts: Double { self["stamp_ms.n"] + self["stamp_ms.unreferenced"] }
        }

        static func probe(backend: String, frameMicroseconds: Int, player: String = "pipewire") throws -> ProbeResult {
            let run = try ExternalTools.run(
                [stampErrorProbe, "40", "200", "\(frameMicroseconds)"],
                environment: ["DESKAUDIO_BACKEND": backend, "STAMP_PLAYER": player])
            #expect(run.status == 0, "stamp-error: \(run.error)")
            print("measured: capture times, \(backend), \(player) player, \(frameMicroseconds / 1000) ms frames: "
                + run.output.split(separator: "\n").filter { !$0.hasPrefix("burst ") }.joined(separator: "; "))
            return ProbeResult(run.output)
        }

        /// PipeWire's native backend stamps frames from the graph clock: each burst's first
        /// sample is placed where the player's own clock put it, to the sample, and
        /// consecutive frames are exactly their length apart (within a continuous run: where
        /// the graph's timing stepped against the samples, the clock relocks, the library flags
        /// that frame DESKAUDIO_FRAME_TIME_STEP and the probe counts it apart, as time_steps).
        @Test(arguments: [10_000, 5_000])
        func pipeWireStampsEachFrameAtTheTimeItsSoundReachedTheSink(frameMicroseconds: Int) throws {
            let result = try Self.probe(backend: "pipewire", frameMicroseconds: frameMicroseconds)
            #expect(result["stamp_ms.n"] >= 38, "bursts heard: \(result["stamp_ms.n"]) of 40")
            #expect(result["stamp_ms.error_abs_p99"] <= 1.0, "stamp error p99: \(result["stamp_ms.error_abs_p99"]) ms")
            #expect(result["steps.n"] >= 100 && result["steps.worst_ms"] <= 0.05,
                    "consecutive frames off their length by up to \(result["steps.worst_ms"]) ms")
            #expect(result["clock.source"] == 2, "the mapping is app audio's server clock")
            #expect(abs(result["clock.rate_ppm"]) < 1000, "rate \(result["clock.rate_ppm"]) ppm")
        }

        /// A capture whose threads are not run for 100 ms (the process stopped, as a starved
        /// machine stops it now and then) misses the PipeWire graph's cycles meanwhile: that
        /// audio is lost before the library sees it. The native backend notices from the graph
        /// clock, counts it (frames_skipped_by_server) and queues as much silence in its place,
        /// so the frames after it keep their sample clock in step with their capture times.
        @Test func cyclesMissedWhileTheProcessIsStoppedAreCountedAndKeepTheTimeline() throws {
            let handle = deskaudio_capture_create()
            defer { deskaudio_capture_destroy(handle) }
            let frames = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(handle, FrameCollector.callback, frames.userData) == 0)
            #expect(deskaudio_capture_set_backend(handle, "pipewire") == 0)
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 4)
            defer { player.terminate() }
            #expect(deskaudio_capture_enable(handle, false, true) == 0)
            #expect(waitUntil(seconds: 3) { frames.count >= 100 }, "frames flow")
            let stopper = try ExternalTools.run(
                ["sh", "-c", "kill -STOP \(getpid()); sleep 0.1; kill -CONT \(getpid())"])
            #expect(stopper.status == 0)
            Thread.sleep(forTimeInterval: 1)
            var stats = deskaudio_stats()
            #expect(deskaudio_capture_get_stats(handle, &stats, MemoryLayout<deskaudio_stats>.size) == 0)
            #expect(deskaudio_capture_enable(handle, false, false) == 0)

            let parsed = try frames.parsed()
            let headers = parsed.map(\.header)
            // Where the sample clock and the capture times part: the largest step of one
            // against the other between consecutive frames.
            let steps = zip(headers, headers.dropFirst()).map { a, b in
                (ms: abs(captureTimeAgainstSampleClockMs(from: a, to: b)), flagged: b.flags.contains(.timeStep), sequence: b.sequence)
            }
            let worstStepMs = steps.map(\.ms).max() ?? .infinity
            let stepsOver1Ms = steps.filter { $0.ms > 1 }.map { "frame \($0.sequence): \($0.ms) ms\($0.flagged ? " (TIME_STEP)" : "")" }
            let tone = ToneCheck(try frames.decoded())
            let dropouts = tone.dropouts(expected: halfScaleSineLevel, tolerance: 1)
            print("measured: process stopped for 100 ms: \(stats.frames_skipped_by_server) frames skipped by the server, "
                + "worst step of capture time against sample clock \(worstStepMs) ms (over 1 ms: \(stepsOver1Ms)), "
                + "10 ms blocks off the tone: \(tone.describe(dropouts))")
            #expect((5...30).contains(stats.frames_skipped_by_server), "frames skipped: \(stats.frames_skipped_by_server)")
            #expect(stats.frames_dropped_overflow == 0)
            #expect(worstStepMs <= 2, "capture times step against the sample clock by up to \(worstStepMs) ms")
        }

        /// examples-c/av-sync: a second of audio frames (100) is exactly 60 video frames, so
        /// frames 0, 100 and 200 land at the same offset into their video frames, unless a frame
        /// between them stepped the timeline (TIME_STEP, which the example prints): then the
        /// frames after it share the offset among themselves. Clean-clone run 41 (Debian 12):
        /// frame 0 at 8.477 ms, frames 100 and 200 at 3.144 (256 samples apart).
        @Test func theAVSyncExamplePlacesFramesOnAVideoTimeline() throws {
            let example = recordExample.replacingOccurrences(of: "/record", with: "/av-sync")
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 4)
            defer { player.terminate() }
            let run = try ExternalTools.run([example, "3", "60"], environment: ["DESKAUDIO_BACKEND": "pipewire"])
            #expect(run.status == 0, "av-sync: \(run.error)")
            let lines = run.output.split(separator: "\n")
            // The offsets of frames 0, 100, 200, each segment starting again after a step.
            var segments: [[Double]] = [[]]
            for line in lines where line.hasPrefix("audio frame ") {
                if line.contains("steps the timeline") {
                    segments.append([])
                } else if let range = line.range(of: "sounded "), let offset = Double(line[range.upperBound...].split(separator: " ")[0]) {
                    segments[segments.count - 1].append(offset)
                }
            }
            let offsets = segments.flatMap { $0 }
            print("measured: av-sync: \(lines.joined(separator: "; "))")
            #expect(offsets.count >= 2, "audio frames placed: \(offsets)")
            #expect(
                segments.allSatisfy { segment in segment.allSatisfy { abs($0 - segment[0]) <= 0.05 } },
                "offsets into the video frames: \(segments) ms (a new list after each time step)")
            #expect(lines.contains { $0.hasPrefix("second 3:") && $0.contains("app audio's server clock") })
        }

        /// The PulseAudio API (here through pipewire-pulse) gives no sample timestamps: frames
        /// are stamped from when each read arrived, smoothed by the same clock loop and moved
        /// to the earliest arrivals (`ArrivalEnvelope`). Measured (docs/capture.md): p50 +0.14
        /// to +0.21 ms, abs p99 0.27 to 0.36 ms in 200 bursts; before the envelope p50 +2.7 ms.
        /// The p99 bound is looser: a quantum the server skips, which this path cannot see at
        /// once, puts the bursts of the next 250-375 ms up to 5 ms off, until the line steps
        /// (`SkippedCycleWatch`, flagged TIME_STEP, which the probe counts apart; several
        /// cycles skipped at once, the bursts of the next 100 ms, by as much); elsewhere
        /// consecutive frames are within 0.05 ms of their length (0.036-0.042 ms in six CI
        /// runs before the line's own moves were limited too, docs/capture.md).
        @Test func pulseStampsFramesWithinAFewMillisecondsSteadily() throws {
            let result = try Self.probe(backend: "pulse", frameMicroseconds: 10_000)
            // The median moves under load as at a 64-sample quantum (below): -1.49 ms in the
            // clean-clone run of 6eb0e36 (Debian 13, six suites at once), 0.04-0.06 ms quiet and
            // in the runs before it. Measured, against half a frame.
            // A burst between a skip and the step it brings is off by the skip (the scenarios
            // assert the step exactly), so the gross p99 budget carries the largest step flagged:
            // under both stacks' suites at once the graph skipped three 256-sample cycles
            // (clean-clone runs 53 and 63: bursts 16.0 ms early, then steps of +16.1 ms).
            Self.expectArrivalStamps(
                result, absP99Ms: 6, grossP99Ms: 15 + (result["steps.largest_time_step_ms"] * 10).rounded(.up) / 10, grossP50Ms: 5)
            #expect(result["clock.source"] == 2, "the mapping is app audio's clock")
        }

        /// Through pipewire-pulse too, a host that asked for a 64-sample quantum
        /// (deskaudio_set_pipewire_quantum()) gets it: the library's client carries
        /// pulse.min.quantum and pulse.min.frag of 64/48000, which pipewire-pulse honours for that
        /// client's streams (every other client stays at its floor of 256), and asks for
        /// 64-sample fragments, so the server shows the record stream's node.latency at 64. The
        /// capture times hold: a skipped cycle is 1.3 ms here, found within about 20 ms
        /// (`SkippedCycleWatch`), and consecutive frames stay their length apart though this
        /// machine makes the graph skip such cycles every second or two. (Latency is measured by
        /// scripts/bench-latency, not here.)
        @Test func pipewirePulseRecordsAtTheQuantumTheHostAskedFor() throws {
            let (process, output, error) = try ExternalTools.start(
                [stampErrorProbe, "40", "200", "10000", "256", "64"],
                environment: ["DESKAUDIO_BACKEND": "pulse", "STAMP_PLAYER": "pipewire"])
            let asked = waitUntil(seconds: 6) {
                (try? ExternalTools.run(["pw-dump"]).output)?.contains("\"node.latency\": \"64/48000\"") == true
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let problems = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "stamp-error: \(problems)")
            #expect(asked, "the record stream asks pipewire-pulse for a 64-sample quantum (pw-dump)")
            print("measured: capture times, pulse on pipewire-pulse, capture quantum 64: "
                + text.split(separator: "\n").filter { !$0.hasPrefix("burst ") }.joined(separator: "; "))
            // Read every 64 samples under CI's load (both stacks' suites at once), the arrival
            // line stamped bursts up to 45 ms early (clean-clone run of b5a2cf9: abs p99 35.7 and
            // 11.5 ms, 124 and 106 relocks; quiet, 0.09-0.13 ms, the library of ddd20c4 alike): the
            // open case of docs/capture.md's far-early bursts. Its gross budget is a frame's scale.
            // The median too moves under that load: -1.89 ms in a clean-clone run of 4a386de
            // (Debian 13, the six suites at once: 50 relocks, 98 time steps, the rate read at
            // -4926 ppm, 5 sample slips), 0.04 ms on a quiet machine with a real-time thread
            // taking 4 ms of every 10 ms (15 sample slips, no relock): measured, with a gross
            // budget of half a frame.
            Self.expectArrivalStamps(ProbeResult(text), absP99Ms: 2, grossP99Ms: 50, grossP50Ms: 5)
        }

        /// Plain PulseAudio (the rig's null sink at s16 44.1 kHz): the reference is the sink's
        /// own account of the probe's playback stream (read index and latency, stamped at the
        /// midpoint of the timing request's round trip), and the capture takes its times from
        /// the server's snapshots of the record stream (`PulseRecordTiming`): as exact as the
        /// native PipeWire backend's, with no step in a continuous run.
        @Test func plainPulseAudioStampsFramesAtTheSinksTime() throws {
            try withPlainPulseAudio { _ in
                let result = try Self.probe(backend: "pulse", frameMicroseconds: 10_000, player: "pulse")
                // The reference is the sink's account, which a rewind moves: under CI's load (a
                // clean-clone run of 1b2a77d) the sink's read index slipped 4 times, 2,400 samples
                // in all, and the bursts beside them were off by -10.0 to +7.0 ms (abs p99 7.0)
                // while consecutive frames stayed within 0.025 ms of their length and nothing
                // stepped. As for the test after this one, the gross budget is what the sink
                // renders ahead, 20 ms; the stamps themselves are asserted exactly by the
                // recorded plain-PulseAudio traces (within 0.2 ms of the server's marks).
                Self.expectArrivalStamps(result, absP99Ms: 1, grossP99Ms: 20)
                // (The plain-PulseAudio start-up step, R-PULSE-FIRST-MARK, is asserted exactly by a scenario.)
                expectWithinBudget("time steps", result["steps.time_steps"], unit: "steps", .atMost(3))
            }
        }

        /// Another client that asks the sink for 2 ms and goes, every 1.6 s, changes the
        /// sink's latency (and so how long before it is played the monitor gets each block)
        /// and makes it rewind: capture times still hold (a lead asked of the sink every
        /// 250 ms was off by 3 ms at p50 and 6.4-6.8 ms at p99 here, with 60 time steps in 40 s).
        @Test func plainPulseAudioStampsHoldWhileTheSinksLatencyChanges() throws {
            try withPlainPulseAudio { _ in
                let (disturber, _, _) = try ExternalTools.start([
                    "sh", "-c",
                    "for i in 1 2 3 4 5 6 7 8 9 10; do timeout 1 pacat --playback --latency-msec=2 --format=s16le "
                        + "--rate=48000 /dev/zero; sleep 0.6; done",
                ])
                defer { disturber.terminate() }
                let result = try Self.probe(backend: "pulse", frameMicroseconds: 10_000, player: "pulse")
                Self.expectBurstsHeard(result)
                #expect(abs(result["stamp_ms.error_p50"]) <= 0.5, "stamp error p50: \(result["stamp_ms.error_p50"]) ms")
                // No relock (a frame moved more than 0.05 ms by a latency change is flagged
                // TIME_STEP since dd328b6, and seen so in one CI run: 1 step, no relock). A rewind
                // rewrites audio the monitor has already handed over, so the bursts beside one are
                // off by up to what the sink had rendered ahead: quiet here, abs p99 0.07 ms; under
                // CI's load 6.0 ms (max 9.1, sample slips 6); the gross budget is that lead
                // (latency_max 19-23 ms in those runs).
                expectWithinBudget("stamp error, abs p99", result["stamp_ms.error_abs_p99"], unit: "ms", .atMost(20))
                expectWithinBudget("relocks", result["clock.relocks"], unit: "relocks", .atMost(2))
            }
        }

        /// Every burst of 40 but two heard, judged or not. With plain PulseAudio's player a burst
        /// is judged by a timing reply answered within 1 ms while it was pending: under both
        /// stacks' suites 3 of 40 went unjudged (clean-clone run 64; the probe did not then tell
        /// unheard from unreferenced). Those heard without a true time are measured, against half.
        static func expectBurstsHeard(_ result: ProbeResult, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(result.bursts >= 38, "bursts heard: \(result.bursts) of 40", sourceLocation: sourceLocation)
            expectWithinBudget(
                "bursts heard with no true time to judge them by", result["stamp_ms.unreferenced"], unit: "bursts", .atMost(20),
                sourceLocation: sourceLocation)
        }

        /// What the PulseAudio API's capture times must show in a 40-burst probe run: every
        /// burst but two heard, error p50 within 1 ms (or, where a loaded machine moves it,
        /// measured against `grossP50Ms`); measured, with gross budgets: abs p99 within 2.5
        /// times `absP99Ms` (the bound once judged), consecutive frames within 1 ms of their
        /// length (the scenarios assert 0.05 ms on a scripted server).
        static func expectArrivalStamps(
            _ result: ProbeResult, absP99Ms: Double, grossP99Ms: Double? = nil, grossP50Ms: Double? = nil,
            sourceLocation: SourceLocation = #_sourceLocation
        ) {
            expectBurstsHeard(result, sourceLocation: sourceLocation)
            if let grossP50Ms {
                expectWithinBudget(
                    "stamp error, abs p50", abs(result["stamp_ms.error_p50"]), unit: "ms", .atMost(grossP50Ms),
                    sourceLocation: sourceLocation)
            } else {
                #expect(
                    abs(result["stamp_ms.error_p50"]) <= 1, "stamp error p50: \(result["stamp_ms.error_p50"]) ms",
                    sourceLocation: sourceLocation)
            }
            expectWithinBudget(
                "stamp error, abs p99", result["stamp_ms.error_abs_p99"], unit: "ms", .atMost(grossP99Ms ?? 2.5 * absP99Ms),
                "\(result["stamp_ms.error_min"])…\(result["stamp_ms.error_max"]) ms", sourceLocation: sourceLocation)
            expectWithinBudget(
                "consecutive frames off their length, worst", result["steps.worst_ms"], unit: "ms", .atMost(1),
                sourceLocation: sourceLocation)
        }
    }
}
