import DeskAudio
import Dispatch
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// `serve --remote-mic NAME`: the AudioFrames browsers send back on their WebSocket, played
/// into one remote microphone on this machine that applications record from. The device is
/// made when the first browser's first frame is taken and removed when that browser leaves.
/// Frames are untrusted: bytes that are not a playable AudioFrame, frames past real time
/// (`SenderAdmission`'s burst) and frames from a second browser while one holds the
/// microphone (one voice at a time; the next may take over after 2 s of quiet) are refused
/// and counted per client, never played. `take` runs on the server's event loop and never
/// blocks it: the device is made and removed on a queue of its own.
final class BrowserMicrophone: Sendable {
    /// What one client's microphone frames came to, readable from any thread.
    final class Counts: Sendable {
        /// Frames played into the microphone.
        let accepted = Atomic<UInt64>(0)
        /// Messages that are not a playable AudioFrame (not one at all, or not 10 ms of 48 kHz mono or stereo).
        let invalid = Atomic<UInt64>(0)
        /// Frames past real time plus the burst.
        let tooFast = Atomic<UInt64>(0)
        /// Frames sent while another browser held the microphone.
        let anotherSender = Atomic<UInt64>(0)
        /// Frames taken before the device was up (it is made on the first frame).
        let early = Atomic<UInt64>(0)

        /// All of them, for a status line: nil when the client never sent a frame.
        var line: String? {
            let counts = [
                accepted.load(ordering: .relaxed), invalid.load(ordering: .relaxed), tooFast.load(ordering: .relaxed),
                anotherSender.load(ordering: .relaxed), early.load(ordering: .relaxed),
            ]
            guard counts.contains(where: { $0 > 0 }) else { return nil }
            return "mic accepted \(counts[0]) invalid \(counts[1]) too-fast \(counts[2]) another-sender \(counts[3]) early \(counts[4])"
        }
    }

    /// The microphone's node name.
    let name: String
    private let state = NIOLockedValueBox(State())
    private let queue = DispatchQueue(label: "deskaudio.serve.remote-mic")
    // After the device could not be made, the next try waits this long.
    private static let retryNs: UInt64 = 5_000_000_000

    private struct State {
        var admission = SenderAdmission()
        var player: FramePlayer?
        var making = false
        var lastFailure: String?
        var failedAtNs: UInt64?
    }

    /// A microphone named `name` (checked as `deskaudio_remote_mic_create` checks it), not on
    /// the server until a browser sends.
    init(name: String) throws(DeskAudioError) {
        _ = try FramePlayer(output: .microphone(name: name, description: ""), onRunning: { _ in })
        self.name = name
    }

    /// One binary message from client `client`: played, or refused and counted in `counts`.
    func take(_ bytes: UnsafeRawBufferPointer, from client: Int, counts: Counts) {
        // (A playable frame is 10 ms long: what it costs against real time.)
        guard (try? JitterBuffer.playableFrame(bytes)) != nil else {
            counts.invalid.add(1, ordering: .relaxed)
            return
        }
        let now = NIODeadline.now().uptimeNanoseconds
        let (verdict, player, make) = state.withLockedValue { state in
            let verdict = state.admission.admit(from: client, audioNs: AudioFormat.frameDurationNs, nowNs: now)
            let rested = state.failedAtNs.map { now &- $0 >= Self.retryNs } ?? true
            let make = state.player == nil && !state.making && rested
                && (verdict == .accepted || verdict == .acceptedNewSender)
            if make { state.making = true }
            return (verdict, state.player, make)
        }
        switch verdict {
        case .tooFast: counts.tooFast.add(1, ordering: .relaxed)
        case .anotherSender: counts.anotherSender.add(1, ordering: .relaxed)
        case .accepted, .acceptedNewSender:
            guard let player else {
                counts.early.add(1, ordering: .relaxed)
                if make { queue.async { self.makeDevice() } }
                return
            }
            if verdict == .acceptedNewSender { player.startNewStream() }
            _ = try? player.feed(bytes)  // (parsed above: it cannot throw)
            counts.accepted.add(1, ordering: .relaxed)
        }
    }

    /// Client `client` left, or said its microphone is off: if it held the microphone, the
    /// device goes.
    func leave(_ client: Int) {
        let removed = state.withLockedValue { state -> FramePlayer? in
            guard state.admission.holder == client else { return nil }
            state.admission.leave(client)
            defer { state.player = nil }
            return state.player
        }
        if let removed { queue.async { removed.stop() } }
    }

    /// Removes the device, if it is up (at the end of `serve`); waits for it.
    func stop() {
        let player = state.withLockedValue { state -> FramePlayer? in
            defer { state.player = nil }
            return state.player
        }
        queue.sync { player?.stop() }
    }

    /// A line for the status display: who holds it, whether an application records it, what played.
    var status: String {
        let (holder, player, failure) = state.withLockedValue { ($0.admission.holder, $0.player, $0.lastFailure) }
        var line = "microphone \(name): "
        if let player {
            let stats = player.stats
            line += "held by client \(holder.map(String.init) ?? "none"), "
                + (stats.isRunning ? "recorded" : "not recorded")
                + ", played \(stats.buffer.framesPlayed) concealed \(stats.buffer.framesConcealed) "
                + "inserted \(stats.buffer.framesInserted) late \(stats.buffer.framesLate) "
                + "dropped \(stats.buffer.framesDropped) gaps \(stats.buffer.gaps)"
        } else {
            line += "not up (no browser sending)"
        }
        if let failure { line += "  last failure: \(failure)" }
        return line
    }

    // On `queue`: puts the device on the server, unless its sender left meanwhile.
    private func makeDevice() {
        let made: FramePlayer?
        var failure: String?
        do throws(DeskAudioError) {
            let player = try FramePlayer(output: .microphone(name: name, description: "DeskAudio: a browser's microphone"), onRunning: { _ in })
            try player.start()
            made = player
        } catch {
            made = nil
            failure = "creating the microphone: \(error.message)"
        }
        let unused = state.withLockedValue { state -> FramePlayer? in
            state.making = false
            if let failure {
                state.lastFailure = failure
                state.failedAtNs = NIODeadline.now().uptimeNanoseconds
                return nil
            }
            guard state.admission.holder != nil else { return made }
            state.player = made
            return nil
        }
        unused?.stop()
    }
}
