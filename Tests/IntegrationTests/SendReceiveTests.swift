import DeskAudio
import DeskAudioC
import DeskAudioCTypes
import Foundation
import Glibc
import TestSupport
import Testing

extension RealServerTests {
    /// `deskaudio send` → a seeded UDP relay → `deskaudio receive`, on loopback, as two
    /// machines would run them: the tone played on the sender's sink, recorded by pw-record
    /// (parecord on plain PulseAudio) from the receiver's microphone (or captured from its
    /// speakers), decoded and checked.
    @Suite struct SendReceiveTests {
        let directory: TemporaryDirectory

        init() throws {
            directory = try TemporaryDirectory(prefix: "deskaudio-udp")
        }

        /// The number after `label` in `text` ("delay p50 12 ms" → 12 for "p50").
        static func number(after label: String, in text: String) -> Int? {
            guard let range = text.range(of: label + " ") else { return nil }
            return Int(text[range.upperBound...].prefix { $0.isNumber })
        }

        /// Levels of the left channel's 10 ms blocks, dBFS.
        static func blockLevels(_ left: ArraySlice<Float>) -> [Double] {
            stride(from: left.startIndex, to: left.endIndex - 480, by: 480).map {
                SignalAnalysis.rmsDecibels(Array(left[$0..<($0 + 480)]))
            }
        }

        @Test(arguments: [
            (jitterMs: 30.0, loss: 0.05, server: "pipewire"), (jitterMs: 0.0, loss: 0.0, server: "pipewire"),
            (jitterMs: 30.0, loss: 0.05, server: "pulseaudio"),
        ])
        func theToneSentThroughTheRelayIsRecordedFromTheRemoteMicrophone(jitterMs: Double, loss: Double, server: String) throws {
            if server == "pulseaudio" {
                try withPlainPulseAudio { try relayTheTone(jitterMs: jitterMs, loss: loss, server: server, environment: $0) }
            } else {
                try relayTheTone(jitterMs: jitterMs, loss: loss, server: server, environment: [:])
            }
        }

        func relayTheTone(jitterMs: Double, loss: Double, server: String, environment: [String: String]) throws {
            let name = "deskaudio_udp_mic"
            let receivePort = try UDPRelay.freePort()
            let relay = try UDPRelay(target: receivePort, jitterMs: jitterMs, loss: loss, seed: 11)
            let (receiver, receiverOutput, receiverErrors) = try ExternalTools.start(
                [commandLineTool, "receive", "--listen", "\(receivePort)", "--as-mic", name],
                environment: environment)
            defer { if receiver.isRunning { kill(receiver.processIdentifier, SIGKILL) } }
            #expect(
                waitUntil(seconds: 3) { (try? RemoteMicTests.sources(environment: environment))?.contains(name) == true },
                "the microphone is there")
            let (sender, senderOutput, _) = try ExternalTools.start(
                [commandLineTool, "send", "--to", "127.0.0.1:\(relay.port)", "--seconds", "9"], environment: environment)
            Thread.sleep(forTimeInterval: 0.5)
            let player = try ExternalTools.playTone(frequency: 1000, amplitude: 0.5, seconds: 8, environment: environment)
            // Past the tone's start and the buffer's first adjustments: 4 s from the microphone.
            Thread.sleep(forTimeInterval: 2.5)
            let file = directory.appendingPathComponent("mic.wav").path
            let recordStarted = MonotonicClock.nowNs()
            let recorder = try RemoteMicTests.record(name, seconds: 4, into: file, server: server, environment: environment)
            let recordSeconds = Double(MonotonicClock.nowNs() - recordStarted) / 1e9
            #expect(recorder.status == 0 || recorder.status == 124, "recorder: \(recorder.error)")
            player.waitUntilExit()
            sender.waitUntilExit()
            // The receiver runs until everything the relay holds (at most 35 ms) has come, then
            // Ctrl-C: it must not quit while the sender's last frames are on their way.
            Thread.sleep(forTimeInterval: 0.3)
            kill(receiver.processIdentifier, SIGINT)
            receiver.waitUntilExit()
            let (relayed, dropped, longestDropRun, droppedInside) = relay.stop()
            let summary = String(decoding: receiverOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let sent = String(decoding: senderOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let progress = String(decoding: receiverErrors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(receiver.terminationStatus == 0 && sender.terminationStatus == 0, "\(progress)")

            let left = SignalAnalysis.left(try ExternalTools.readWav16(file)[...])
            let steady = left[min(left.count, 24_000)..<max(min(left.count, 24_000), left.count - 4_800)]
            // The recorder records 4 s from its start, which a loaded machine delays (clean-clone
            // run of 7b07821: 3.54 s written): 2 s of steady tone are enough to judge.
            let recorderName = server == "pipewire" ? "pw-record" : "parecord"
            let fileBytes = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? nil
            #expect(
                steady.count >= 48_000 * 2,
                "\(recorderName) wrote \(left.count) samples (\(fileBytes.map(String.init) ?? "no") bytes in the file) in \(recordSeconds) s, status \(recorder.status): \(recorder.error)")
            // 20 ms blocks: a frame the jitter buffer drops or inserts jumps the phase (R-JB-PHASE).
            let level = SignalAnalysis.medianBlockLevel(steady, frequency: 1000, block: 960)
            #expect(abs(level - halfScaleSineLevel) <= 1, "the tone at \(level) dBFS")
            // No gap: no run of 10 ms blocks 6 dB under the tone longer than one concealed run:
            // the most frames the relay dropped in a row, and the frames the receiver inserted
            // while the next one was late (concealed too; its own count, over the whole run),
            // and one block that a run of frames straddles (the blocks are cut from the
            // recording, not at frame boundaries). Clean-clone run 39, plain PulseAudio: 5
            // quiet blocks with 2 dropped in a row and 2 inserted. Audio the sender's server
            // moved past its capture (its threads not run in time; `send` says how much) was
            // never sent: it is silence here too (clean-clone run 51, both suites at once: 2
            // quiet blocks with nothing dropped or inserted, 15 frames' worth skipped there).
            var longestRun = 0
            var run = 0
            for block in Self.blockLevels(steady) {
                run = block < halfScaleSineLevel - 6 ? run + 1 : 0
                longestRun = max(longestRun, run)
            }
            let inserted = try #require(Self.number(after: "inserted", in: summary), "\(summary)")
            let skipped = Int(serverSkips(in: sent))
            // Measured: quiet blocks in a row beyond what the relay and the servers explain, with a
            // gross budget of 10 (100 ms).
            expectWithinBudget(
                "quiet 10 ms blocks in a row, unexplained", Double(max(longestRun - (longestDropRun + inserted + skipped + 1), 0)),
                unit: "blocks", .atMost(10),
                "\(longestRun) quiet in a row, \(longestDropRun) dropped in a row, \(inserted) inserted, \(skipped) skipped by the sender's server")
            let p50 = try #require(Self.number(after: "p50", in: summary), "\(summary)")
            let p99 = try #require(Self.number(after: "p99", in: summary), "\(summary)")
            // The buffer holds 30 ms over the frames' spread on the way (50 with jitter added,
            // where it aims higher): the spread is the relay's jitter and whatever the machine
            // added (a sender or the relay not run in time: clean-clone runs of both suites at
            // once saw p99 35 ms with none added, and 89 ms with 30 ms added, where the
            // buffer raised its target to 80 ms). A sender whose server skipped audio was
            // stalled for at least that long, which the buffer rides out by holding more for a
            // while: that much is added (run 51: p99 74 ms, 15 frames' worth skipped). Gross:
            // 250 ms, short of the buffer's 300 ms bound (clean-clone runs 35-43: from -119 to
            // 157 ms, the 157 with the suites of both stacks beside it).
            let spread = relay.forwardSpreadMs
            let bound = (jitterMs == 0 ? 30 : 50) + spread + Double(skipped * 10)
            expectWithinBudget(
                "arrival to source delay p99, past the frames' spread", Double(p99) - bound + (jitterMs == 0 ? 30 : 50), unit: "ms",
                .atMost(250), "p99 \(p99) ms; the frames' spread on the way \(spread) ms, \(skipped) frames' worth skipped by the sender's server")
            #expect(
                Self.number(after: "lost", in: summary) == droppedInside,
                "the loss counted is the relay's (\(droppedInside) between two frames that came, of \(dropped)): \(summary)")
            print(
                "measured: send → relay (5 ms + 0..\(Int(jitterMs)) ms, \(Int(loss * 100)) % loss, seed 11: \(relayed) relayed, "
                    + "\(dropped) dropped, at most \(longestDropRun) in a row; frames spread \((spread * 10).rounded() / 10) ms) → receive --as-mic → \(server == "pipewire" ? "pw-record" : "parecord (plain PulseAudio)"): 1 kHz at \(level) dBFS, longest quiet run "
                    + "\(longestRun) blocks; delay arrival→source p50 \(p50) ms, p99 \(p99) ms; \(summary.trimmingCharacters(in: .whitespacesAndNewlines)); "
                    + sent.trimmingCharacters(in: .whitespacesAndNewlines))
        }

        @Test func receiveOnTheSpeakersPlaysWhatSendCapturedElsewhere() throws {
            // The sender captures deskaudio_other's monitor; the receiver plays on the default
            // sink, which the host's whole-sink capture hears.
            let receivePort = try UDPRelay.freePort()
            let (receiver, receiverOutput, _) = try ExternalTools.start(
                [commandLineTool, "receive", "--listen", "\(receivePort)", "--seconds", "6"])
            defer { if receiver.isRunning { kill(receiver.processIdentifier, SIGKILL) } }
            Thread.sleep(forTimeInterval: 0.5)
            let (speakers, heard) = try MuteHostTests.speakers()
            defer { deskaudio_capture_destroy(speakers) }
            let (sender, senderOutput, _) = try ExternalTools.start(
                [commandLineTool, "send", "--to", "[::1]:\(receivePort)", "--device", "deskaudio_other", "--seconds", "5"])
            Thread.sleep(forTimeInterval: 0.5)
            let player = try ExternalTools.playTone(frequency: 440, amplitude: 0.3, seconds: 3, device: "deskaudio_other")
            player.waitUntilExit()
            sender.waitUntilExit()
            receiver.waitUntilExit()
            #expect(deskaudio_capture_enable(speakers, false, false) == 0)
            var speakerStats = deskaudio_stats()
            #expect(deskaudio_capture_get_stats(speakers, &speakerStats, MemoryLayout<deskaudio_stats>.size) == 0)
            let summary = String(decoding: receiverOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let sent = String(decoding: senderOutput.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let left = SignalAnalysis.left(try heard.decoded()[...])
            let blocks = Self.blockLevels(left[...])
            let loud = blocks.indices.filter { blocks[$0] > quietSineLevel - 6 }
            let first = try #require(loud.first, "the speakers never played the tone: \(summary)")
            let last = try #require(loud.last)
            // 20 ms blocks: a frame the jitter buffer drops or inserts jumps the phase (R-JB-PHASE).
            let level = SignalAnalysis.medianBlockLevel(left[((first + 20) * 480)..<((last - 10) * 480)], frequency: 440, block: 960)
            #expect(abs(level - quietSineLevel) <= 1, "440 Hz on the speakers at \(level) dBFS")
            // The 300 blocks' worth of tone all reach the speakers, less what the receiver says
            // it dropped or threw away late and the servers skipped, plus what it inserted or
            // concealed. Counted as energy against the steady tone's, so that a block a pause
            // cuts counts for the tone it holds; a pause's edges may move it by half a block
            // each, and so may a frame taken out or put in, where the codec's 2.5 ms overlap
            // cross-fades two stretches of tone out of phase (clean-clone run 65: 291.3 blocks'
            // worth with 5 dropped). When (not whether) the tone sounds is the load's: players
            // and streams starved by it stretched it to 325 and 328 blocks (runs 49 and 63).
            let heardBlocks = (blocks.reduce(0) { $0 + pow(10, ($1 - level) / 10) } * 10).rounded() / 10
            let count = { (label: String) in Double(Self.number(after: label, in: summary) ?? 0) }
            let pauses = Double(zip(loud, loud.dropFirst()).filter { $1 > $0 + 1 }.count)
            let takenOut = count("dropped") + count("late") + count("lost")
            let putIn = count("inserted") + count("concealed")
            let slack = 3 + pauses + (takenOut + putIn) / 2
            let skipped = Double(serverSkips(in: sent) + speakerStats.frames_skipped_by_server)
            let fewest = 300 - takenOut - skipped - slack
            let most = 300 + putIn + slack
            let accounted = "\(fewest)...\(most) by the receiver's counts, \(skipped) skipped by the servers and \(pauses) pauses"
            #expect(
                fewest <= heardBlocks && heardBlocks <= most,
                "\(heardBlocks) blocks' worth of tone heard of 300, \(accounted); \(summary); \(sent)")
            expectWithinBudget(
                "the tone's 3 s stretched by the path", Double(last - first + 1 - 300) / 100, unit: "s", .atMost(1),
                "\(last - first + 1) blocks from the tone's first to its last")
            print("measured: send --device deskaudio_other → receive (speakers) → whole-sink capture: 440 Hz at \(level) dBFS, "
                + "\(heardBlocks) blocks' worth of tone over \(last - first + 1) (\(accounted)); \(summary.trimmingCharacters(in: .whitespacesAndNewlines))")
        }

        /// A viewer on a thread: `seconds` of a 440 Hz tone at 0.3 (s16 mono 16 kHz) through
        /// deskaudio_encoder, each frame sent over UDP to `port` on loopback; its clock runs
        /// `rate` times real time (10 ms of audio every 10 ms / rate).
        static func viewer(sendingTo port: UInt16, seconds: Double, rate: Double) -> Thread {
            let thread = Thread {
                guard let encoder = deskaudio_encoder_create() else { return }
                defer { deskaudio_encoder_destroy(encoder) }
                let socket = Glibc.socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                defer { close(socket) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = port.bigEndian
                address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                }
                let tone = SignalAnalysis.left(SignalAnalysis.sine(frequency: 1320, amplitude: 0.3, frames: 16_000)[...])
                    .map { Int16(($0 * 32767).rounded()) }
                let start = MonotonicClock.nowNs()
                for tick in 0..<Int(seconds * 100 * rate) {
                    let offset = (tick * 160) % 16_000
                    _ = tone[offset..<(offset + 160)].withUnsafeBytes {
                        deskaudio_encoder_push_pcm(
                            encoder, $0.baseAddress, $0.count, deskaudio_pcm_format.DESKAUDIO_PCM_S16.rawValue, 1, 16_000,
                            0, { frame, length, socket in _ = send(Int32(Int(bitPattern: socket)), frame, length, 0) },
                            UnsafeMutableRawPointer(bitPattern: Int(socket)))
                    }
                    sleepUntil(monotonicNs: start + UInt64(Double(tick + 1) * 10_000_000 / rate))
                }
            }
            thread.start()
            return thread
        }

        /// Clock drift through the real path: the viewer's clock runs fast (0.3 % for 20 s here;
        /// `DESKAUDIO_DRIFT_RATE` and `DESKAUDIO_DRIFT_SECONDS` set a longer run, such as
        /// 1.001 for 600 s): receive drops about the frames it gained, the delay stays bounded,
        /// and the tone plays at its level at the end.
        @Test func theReceiverAbsorbsAFastSendersClock() throws {
            let environment = ProcessInfo.processInfo.environment
            let rate = environment["DESKAUDIO_DRIFT_RATE"].flatMap(Double.init) ?? 1.003
            let seconds = environment["DESKAUDIO_DRIFT_SECONDS"].flatMap(Double.init) ?? 20
            let port = try UDPRelay.freePort()
            let (receiver, output, errors) = try ExternalTools.start(
                [commandLineTool, "receive", "--listen", "\(port)", "--seconds", "\(seconds + 1)"])
            defer { if receiver.isRunning { kill(receiver.processIdentifier, SIGKILL) } }
            Thread.sleep(forTimeInterval: 0.5)
            let viewer = Self.viewer(sendingTo: port, seconds: seconds, rate: rate)
            Thread.sleep(forTimeInterval: seconds - 3)
            let (speakers, heard) = try MuteHostTests.speakers()
            defer { deskaudio_capture_destroy(speakers) }
            while viewer.isExecuting { usleep(20_000) }
            #expect(deskaudio_capture_enable(speakers, false, false) == 0)
            receiver.waitUntilExit()
            let summary = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let progress = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // The status lines, one a second: "... delay 20 ms ..." is the buffer's target.
            let targets = progress.split(separator: "\n").compactMap { Self.number(after: "delay", in: String($0)) }
            let dropped = try #require(Self.number(after: "dropped", in: summary), "\(summary)")
            let inserted = try #require(Self.number(after: "inserted", in: summary), "\(summary)")
            let gained = seconds * 100 * (rate - 1)
            // Every frame gained is dropped or held: the buffer drops what it held past its
            // target through a backlog window (JitterBuffer.adjustForSteadyArrival), so when the
            // sender stops up to three gained frames may still be in it. A player or network
            // thread not run in time drops or inserts frames of its own: the drift's exact
            // account is JitterBufferTests' (on simulated time); here it is measured, with a
            // gross budget (quiet: 5 dropped for 6 gained; under the sanitized lanes' load, 8).
            let grown = Double((targets.last ?? 0) - (targets.first ?? 0)) / 10
            expectWithinBudget(
                "drops apart from the frames gained", abs(Double(dropped) - gained), unit: "frames", .atMost(15),
                "\(dropped) dropped for \(gained) gained, the target grown by \(grown) frames (up to 3 may still be buffered)")
            // (The viewer stops without its gate closing: the buffer's last 100 ms are
            // concealed, counted as inserted.) The underruns beyond those and the target the
            // jitter raised are the machine's: quiet, none and 20 ms; under CI's load (a
            // clean-clone run of ed9c5a2, eight suites at once) 4 and up to 80 ms; in six runs
            // since, 0, 0, 0, 1, 1 and 14, and the largest target 40, 20, 30, 40, 150 and 30 ms
            // (a stall of the player's thread: the buffer rightly grew for it). Measured, with
            // gross budgets: 1.5 % of the run's frames (300 ms); 250 ms, short of the buffer's
            // bound (300 ms), which a target stuck high would reach.
            expectWithinBudget(
                "underruns beyond the last 100 ms", Double(inserted - JitterBuffer.maxConcealedRun), unit: "frames",
                .atMost(30))
            expectWithinBudget("the target's largest", Double(targets.max() ?? 999), unit: "ms", .atMost(250))
            let left = SignalAnalysis.left(try heard.decoded()[...])
            // 20 ms blocks: a frame the jitter buffer drops or inserts jumps the phase (R-JB-PHASE).
            let level = SignalAnalysis.medianBlockLevel(left[min(left.count, 48_000)...], frequency: 440, block: 960)
            #expect(abs(level - quietSineLevel) <= 1, "the last seconds: \(level) dBFS")
            print(
                "measured: sender clock x\(rate) for \(Int(seconds)) s through receive (speakers): \(dropped) dropped, "
                    + "\(inserted) inserted for \(gained) frames gained; target \(targets.min() ?? -1)-\(targets.max() ?? -1) ms; "
                    + "the tone at \(level) dBFS at the end; \(summary.trimmingCharacters(in: .whitespacesAndNewlines))")
        }

        @Test func aKilledReceiversMicrophoneIsGoneWithinASecond() throws {
            let name = "deskaudio_killed_mic"
            let (receiver, _, _) = try ExternalTools.start(
                [commandLineTool, "receive", "--listen", "\(try UDPRelay.freePort())", "--as-mic", name])
            defer { if receiver.isRunning { kill(receiver.processIdentifier, SIGKILL) } }
            #expect(waitUntil(seconds: 3) { (try? RemoteMicTests.sources())?.contains(name) == true })
            let killedAt = MonotonicClock.nowNs()
            kill(receiver.processIdentifier, SIGKILL)
            let gone = waitUntil(seconds: 1) { (try? RemoteMicTests.sources())?.contains(name) == false }
            let goneMs = Double(MonotonicClock.nowNs() - killedAt) / 1e6
            #expect(gone, "still listed \(goneMs) ms after kill -9")
            print("measured: receive --as-mic killed with SIGKILL: the source gone from pactl after \(Int(goneMs)) ms")
        }

        /// On a plain PulseAudio daemon the microphone is two modules, which outlive a killed
        /// process; the next start of a microphone (or a capture) on that server unloads them.
        @Test func aKilledReceiversMicrophoneOnPulseAudioIsRemovedByTheNextStart() throws {
            try withPlainPulseAudio { environment in
                let name = "deskaudio_killed_pulse_mic"
                let sources = { (try? RemoteMicTests.sources(environment: environment)) ?? [] }
                let (killed, _, _) = try ExternalTools.start(
                    [commandLineTool, "receive", "--listen", "\(try UDPRelay.freePort())", "--as-mic", name],
                    environment: environment)
                defer { if killed.isRunning { kill(killed.processIdentifier, SIGKILL) } }
                #expect(waitUntil(seconds: 3) { sources().contains(name) })
                kill(killed.processIdentifier, SIGKILL)
                killed.waitUntilExit()
                Thread.sleep(forTimeInterval: 1)
                let leftOver = sources().contains(name)
                let startedAt = MonotonicClock.nowNs()
                let (next, _, _) = try ExternalTools.start(
                    [commandLineTool, "receive", "--listen", "\(try UDPRelay.freePort())", "--as-mic", "deskaudio_next_mic",
                     "--seconds", "3"], environment: environment)
                defer { if next.isRunning { kill(next.processIdentifier, SIGKILL) } }
                #expect(waitUntil(seconds: 3) { sources().contains("deskaudio_next_mic") })
                let repairedMs = Double(MonotonicClock.nowNs() - startedAt) / 1e6
                #expect(!sources().contains(name), "the killed receiver's microphone is still there")
                let modules = try ExternalTools.run(["pactl", "list", "short", "modules"], environment: environment).output
                #expect(modules.components(separatedBy: "deskaudio_remotemic_").count == 3, "only the next one's two modules: \(modules)")
                next.waitUntilExit()
                #expect(waitUntil(seconds: 1) { !sources().contains("deskaudio_next_mic") }, "the next one cleans up after itself")
                print(
                    "measured: plain PulseAudio, receive --as-mic killed with SIGKILL: source still listed 1 s later: \(leftOver); "
                        + "gone once the next receive --as-mic was up, \(Int(repairedMs)) ms after it started")
            }
        }

        @Test func sendAndReceiveFailClearlyOnBadInput() throws {
            let badAddress = try ExternalTools.run([commandLineTool, "send", "--to", "nowhere", "--seconds", "1"])
            #expect(badAddress.status != 0 && badAddress.error.contains("is not HOST:PORT"), "\(badAddress.error)")
            let badName = try ExternalTools.run(
                [commandLineTool, "receive", "--listen", "\(try UDPRelay.freePort())", "--as-mic", "has space", "--seconds", "1"])
            #expect(badName.status != 0 && badName.error.contains("1 to 64 of letters"), "\(badName.error)")
            // Garbage datagrams are counted as refused; the receiver goes on.
            let port = try UDPRelay.freePort()
            let (receiver, output, errors) = try ExternalTools.start(
                [commandLineTool, "receive", "--listen", "\(port)", "--seconds", "1.5"])
            Thread.sleep(forTimeInterval: 0.5)
            let probe = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
            defer { close(probe) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            let garbage = [UInt8](repeating: 7, count: 40)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(probe, garbage, garbage.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            receiver.waitUntilExit()
            let summary = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            let progress = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(receiver.terminationStatus == 0)
            #expect(summary.hasPrefix("received 1 packets (1 refused)"), "\(summary)")
            #expect(progress.contains("not a playable AudioFrame"), "\(progress)")
        }
    }
}
