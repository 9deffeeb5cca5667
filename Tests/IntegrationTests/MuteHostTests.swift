import DeskAudio
import DeskAudioC
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// Muting the host (deskaudio_capture_set_mute_host) on PipeWire's native backend: the
    /// private PipeWire's default sink stands for the machine's speakers, and a second capture
    /// of its whole monitor in this process hears what they would play.
    @Suite struct MuteHostTests {
        /// Per 10 ms frame of `collector`: its capture time and the level (dBFS) of `frequency` in it.
        static func frameLevels(_ collector: FrameCollector, of frequency: Double) throws -> [(time: UInt64, level: Double)] {
            let frames = try collector.parsed()
            let decoded = try collector.decoded()
            return frames.indices.filter { ($0 + 1) * 960 <= decoded.count }.map { index in
                let samples = SignalAnalysis.left(decoded[(index * 960)..<((index + 1) * 960)])
                return (frames[index].header.captureTimeNs, SignalAnalysis.toneLevelDecibels(samples, frequency: frequency))
            }
        }

        /// A capture of the speakers: the default sink's whole monitor, started.
        static func speakers() throws -> (deskaudio_capture?, FrameCollector) {
            let capture = deskaudio_capture_create()
            let collector = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, collector.userData) == 0)
            #expect(deskaudio_capture_enable(capture, false, true) == 0)
            #expect(waitUntil(seconds: 3) { collector.count >= 10 }, "the speakers' capture runs")
            return (capture, collector)
        }

        /// The target the session manager reads for each stream, as `pw-metadata` prints them.
        static func streamTargets() throws -> [String] {
            try ExternalTools.run(["pw-metadata", "-n", "default"]).output.split(separator: "\n")
                .filter { $0.contains("key:'target.object'") || $0.contains("deskaudio.") }.map(String.init)
        }

        @Test func theSpeakersGoQuietWhileCapturingAndHearTheAppAgainWithin1sOfTheStop() throws {
            let (speakers, heard) = try Self.speakers()
            defer { deskaudio_capture_destroy(speakers) }
            let capture = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(capture) }
            let recorded = FrameCollector()
            #expect(deskaudio_capture_set_frame_callback(capture, FrameCollector.callback, recorded.userData) == 0)
            #expect(deskaudio_capture_set_backend(capture, "pipewire") == 0)
            #expect(AppRoutingTests.setApps(capture, .DESKAUDIO_APPS_ONLY, ["ToneA"]) == 0)
            #expect(deskaudio_capture_set_mute_host(capture, true) == 0)
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(AppRoutingTests.lastError())")
            #expect(waitUntil(seconds: 3) { recorded.count >= 10 })

            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 3.5, application: "ToneA")
            defer { player.waitUntilExit() }
            Thread.sleep(forTimeInterval: 2)
            let targetsWhileMuted = try Self.streamTargets()
            let stoppedAt = MonotonicClock.nowNs()
            #expect(deskaudio_capture_enable(capture, false, false) == 0)
            Thread.sleep(forTimeInterval: 1.2)
            #expect(deskaudio_capture_enable(speakers, false, false) == 0)
            let targetsAfter = try Self.streamTargets()

            // The capture holds the tone whole.
            let levels = try AppRoutingTests.levels(recorded, [440], reference: 440)
            #expect(abs(levels[0] - quietSineLevel) <= 1, "the capture's 440 Hz at \(levels[0]) dBFS")
            // The speakers: the tone until the mute took it (it plays to the default sink first,
            // until the session manager moves it), silence until the stop, the tone again after.
            let speakerLevels = try Self.frameLevels(heard, of: 440)
            let firstHeard = try #require(
                try Self.frameLevels(recorded, of: 440).first { $0.level > -30 }?.time, "the capture hears the tone")
            let lastBeforeMute = speakerLevels.last { $0.time < stoppedAt && $0.level > -90 }?.time ?? firstHeard
            let muteTookMs = (Double(lastBeforeMute) - Double(firstHeard)) / 1e6
            #expect(muteTookMs < 500, "the speakers heard it for \(muteTookMs) ms after the capture did")
            let muted = speakerLevels.filter { $0.time > lastBeforeMute && $0.time < stoppedAt }
            #expect(muted.count >= 100, "\(muted.count) quiet frames on the speakers while capturing")
            let loudestMuted = muted.map(\.level).max() ?? 0
            #expect(loudestMuted <= -90, "the speakers while muted: 440 Hz up to \(loudestMuted) dBFS")
            let back = try #require(
                speakerLevels.first { $0.time > stoppedAt && $0.level > -30 }, "the speakers hear it after the stop")
            let backMs = (Double(back.time) - Double(stoppedAt)) / 1e6
            #expect(backMs <= 1000, "back on the speakers \(backMs) ms after the stop")
            #expect(targetsWhileMuted.contains { $0.contains("deskaudio-mute-") }, "\(targetsWhileMuted)")
            #expect(targetsAfter.isEmpty, "targets left after the stop: \(targetsAfter)")
            print(
                "measured: mute host, ToneA 440 Hz: capture \(levels[0]) dBFS; speakers heard it \(muteTookMs) ms "
                    + "past the capture's start of it, then \(muted.count) frames up to \(loudestMuted) dBFS; "
                    + "back \(backMs) ms after the stop")
        }

        /// A host killed with SIGKILL while muting: its sink goes with its connection and the
        /// speakers hear the app within 1 s; the target it left in the metadata is mended by
        /// the next capture that mutes.
        @Test func aKilledHostsAppIsBackOnTheSpeakersWithin1sAndTheNextMuteMendsItsTarget() throws {
            let (speakers, heard) = try Self.speakers()
            defer { deskaudio_capture_destroy(speakers) }
            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 4, application: "ToneA")
            defer { player.waitUntilExit() }
            let (host, _, _) = try ExternalTools.start(
                [commandLineTool, "record", "--only", "ToneA", "--mute-host", "--seconds", "30", "--backend", "pipewire",
                 "/dev/null"])
            #expect(
                waitUntil(seconds: 3) { (try? Self.streamTargets())?.contains { $0.contains("deskaudio-mute-") } == true },
                "the host mutes ToneA")
            Thread.sleep(forTimeInterval: 0.5)
            let killedAt = MonotonicClock.nowNs()
            kill(host.processIdentifier, SIGKILL)
            host.waitUntilExit()
            Thread.sleep(forTimeInterval: 1.2)
            let leftover = try Self.streamTargets()

            // The next capture that mutes (here of another app) mends the target left behind.
            let capture = try #require(deskaudio_capture_create())
            defer { deskaudio_capture_destroy(capture) }
            #expect(deskaudio_capture_set_backend(capture, "pipewire") == 0)
            #expect(AppRoutingTests.setApps(capture, .DESKAUDIO_APPS_ONLY, ["ToneB"]) == 0)
            #expect(deskaudio_capture_set_mute_host(capture, true) == 0)
            #expect(deskaudio_capture_enable(capture, false, true) == 0, "\(AppRoutingTests.lastError())")
            let mended = waitUntil(seconds: 1) { (try? Self.streamTargets())?.isEmpty == true }
            #expect(deskaudio_capture_enable(capture, false, false) == 0)
            #expect(deskaudio_capture_enable(speakers, false, false) == 0)

            let speakerLevels = try Self.frameLevels(heard, of: 440)
            let quietBeforeKill = speakerLevels.filter { $0.time < killedAt }.suffix(40).map(\.level).max() ?? 0
            #expect(quietBeforeKill <= -90, "the speakers in the 0.4 s before the kill: \(quietBeforeKill) dBFS")
            let back = try #require(
                speakerLevels.first { $0.time > killedAt && $0.level > -30 }, "the speakers hear it after the kill")
            let backMs = (Double(back.time) - Double(killedAt)) / 1e6
            #expect(backMs <= 1000, "back on the speakers \(backMs) ms after the kill")
            #expect(mended, "targets after the next mute: \((try? Self.streamTargets()) ?? [])")
            print(
                "measured: host muting ToneA killed: speakers \(quietBeforeKill) dBFS before, the tone back \(backMs) ms "
                    + "after the kill; left in the metadata: \(leftover.count) entries, mended by the next mute: \(mended)")
        }
    }
}
