/// Between AudioFrames arriving from the network and a player that takes exactly 10 ms every
/// 10 ms (a remote microphone, a sink): frames are put back in sequence order and played
/// after an adaptive delay; frames that waited longer than that delay before playing started
/// (a backlog) are dropped, not played late. The delay starts at 20 ms, grows at once to
/// cover the arrival jitter seen (the spread of arrival minus capture time over the last
/// 2.56 s), and by a frame on each underrun; it shrinks a frame per 2 s of steady arrival.
/// Frames held past it through a whole backlog window (a player not run in time, which then
/// takes only 10 ms a tick) are dropped at once, down to it (R-JB-BACKLOG). A frame lost in
/// transit is concealed (rebuilt from the next packet's in-band FEC when it is there, else
/// Opus PLC); the silence of a sender whose zero gate closed is played as silence, never
/// concealed. Clock drift between the machines is absorbed the same way: a sender running
/// fast fills the buffer, and frames are dropped; one running slow empties it, and a
/// concealed frame is inserted; the delay stays within its bounds. Everything is allocated at
/// creation: `insert` and `pull` allocate nothing. Not thread-safe: one thread at a time (the
/// remote microphone serializes the network thread and the player).
public final class JitterBuffer {
    /// Running counts.
    public struct Counters: Equatable, Sendable {
        /// Frames accepted into the buffer.
        public var framesReceived: UInt64 = 0
        /// Frames played as decoded.
        public var framesPlayed: UInt64 = 0
        /// Frames lost in transit, played concealed.
        public var framesConcealed: UInt64 = 0
        /// Frames that arrived after their time to play, or twice: dropped.
        public var framesLate: UInt64 = 0
        /// Concealed frames inserted because the next frame had not arrived yet (the delay
        /// grew by a frame each time: an underrun, or a sender clock running slow).
        public var framesInserted: UInt64 = 0
        /// Frames dropped to bring the delay back down (steady arrival, a fast sender clock,
        /// or a backlog when playing starts).
        public var framesDropped: UInt64 = 0
        /// Times the sender went silent (its zero gate) and the buffer played silence.
        public var gaps: UInt64 = 0
    }

    /// What one `pull` played.
    public enum Played: Equatable, Sendable {
        /// Nothing yet, or the sender is silent: zeros.
        case silence
        /// The frame with this sequence number, `delayNs` after it arrived.
        case frame(sequence: UInt32, delayNs: UInt64)
        /// A concealed frame (a loss, or an insertion while waiting).
        case concealed
    }

    /// Frames the buffer holds at most: 1.28 s.
    public static let capacity = 128
    /// The delay's bounds, in frames: 10 ms to 300 ms.
    public static let delayFrames: ClosedRange<Int> = 1...30
    /// Frames of concealment after the last frame before the buffer waits in silence: 100 ms.
    public static let maxConcealedRun = 10
    /// Pulls over which frames held past the target are a backlog: 0.5 s, longer than any
    /// burst a network or a player's period makes.
    public static let backlogWindowPulls = 50

    /// Counts so far.
    public private(set) var counters = Counters()
    /// The delay the buffer aims at now, in frames.
    public private(set) var targetFrames = 2
    /// Frames waiting to be played (from the next one to the newest received).
    public var bufferedFrames: Int {
        guard let next, let newest else { return 0 }
        return max(0, Int(Int32(bitPattern: newest &- next)) + 1)
    }

    private let decoder: OpusFrameDecoder
    private let packets = FrameSlots(count: JitterBuffer.capacity)  // stamped with arrival times
    private let sequences: UnsafeMutableBufferPointer<UInt32>
    private let scratch: UnsafeMutableBufferPointer<Float>
    private var next: UInt32?
    private var newest: UInt32?
    private var playing = false
    private var concealedRun = 0
    private var lastWasSilent = false
    private var steadyPulls = 0
    // Pulls so far in the backlog window, and the fewest frames held past the target in it.
    private var backlogPulls = 0
    private var leastExcess = Int.max
    // The frame an underrun waited for: if it still comes, it was late, and the delay grows.
    private var awaited: UInt32?
    // Arrival minus capture time of the last `transitWindow` frames, for the jitter.
    private static let transitWindow = 256
    private let transits: UnsafeMutableBufferPointer<Int64>
    private var transitCount = 0
    private var transitIndex = 0
    private var jitterNs: Int64 = 0

    /// An empty buffer with a fresh Opus decoder.
    public init() throws(DeskAudioError) {
        decoder = try OpusFrameDecoder()
        sequences = .zeroed(JitterBuffer.capacity)
        scratch = .allocate(capacity: AudioFormat.frameFloats)
        transits = .zeroed(JitterBuffer.transitWindow)
    }

    deinit {
        sequences.deallocate()
        scratch.deallocate()
        transits.deallocate()
    }

    /// Takes one AudioFrame that arrived at `arrivalNs` (CLOCK_MONOTONIC of this machine).
    /// Throws `.invalidFrame` for bytes that are not an AudioFrame and `.notSupported` for a
    /// frame that is not 10 ms of 48 kHz mono or stereo; the buffer is then unchanged. A frame whose
    /// time to play has passed, or one already held, is counted late and dropped; one further
    /// from the next to play than the buffer holds, either way, starts the stream again (the
    /// sender started over).
    public func insert(_ bytes: UnsafeRawBufferPointer, arrivalNs: UInt64) throws(DeskAudioError) {
        let frame = try JitterBuffer.playableFrame(bytes)
        let header = frame.header
        let sequence = header.sequence
        if let next {
            let ahead = Int(Int32(bitPattern: sequence &- next))
            if ahead >= JitterBuffer.capacity || ahead <= -JitterBuffer.capacity {
                restart(at: sequence)  // further off than the buffer holds: the sender started over
            } else if ahead < 0 {
                counters.framesLate += 1
                return
            }
        } else {
            restart(at: sequence)
        }
        if slotHolds(sequence) {
            counters.framesLate += 1
            return
        }
        let index = slot(sequence)
        packets.store(frame.payload, in: index, stamp: arrivalNs)  // (the parser refuses an empty payload)
        sequences[index] = sequence
        if let newest, Int32(bitPattern: sequence &- newest) <= 0 {} else { newest = sequence }
        counters.framesReceived += 1
        if sequence == awaited {
            targetFrames = min(targetFrames + 1, JitterBuffer.delayFrames.upperBound)
            steadyPulls = 0
        }
        awaited = nil
        noteTransit(Int64(bitPattern: arrivalNs &- header.captureTimeNs))
    }

    /// `bytes` parsed, if they are an AudioFrame the buffer can play: 10 ms of 48 kHz mono or
    /// stereo (mono is played on both channels).
    /// Throws `.invalidFrame` (the parser's reason) or `.notSupported`. Touches no state: a
    /// feeder may check a frame before handing it over to the buffer's thread.
    public static func playableFrame(_ bytes: UnsafeRawBufferPointer) throws(DeskAudioError) -> AudioFrameParser.Frame {
        let frame: AudioFrameParser.Frame
        do { frame = try AudioFrameParser.parse(bytes) } catch { throw .invalidFrame(error) }
        let header = frame.header  // (the parser has checked the rate: 48 kHz)
        guard Int(header.frameSamples) == AudioFormat.frameSamples, header.channels == 1 || header.channels == 2,
            header.mapping == nil
        else {
            throw .notSupported(
                "a frame of \(header.frameSamples) samples, \(header.channels) channels at \(header.sampleRate) Hz, "
                    + "version \(header.version): the jitter buffer plays 10 ms of 48 kHz mono or stereo, version 1")
        }
        return frame
    }

    /// Writes the next 10 ms (480 interleaved stereo samples, 960 floats) into `output` and
    /// says what they are. Call it once per 10 ms of playback, at `nowNs`.
    public func pull(into output: UnsafeMutableBufferPointer<Float>, nowNs: UInt64) -> Played {
        precondition(output.count >= AudioFormat.frameFloats, "pull needs room for one frame")
        let frame = UnsafeMutableBufferPointer(rebasing: output[0..<AudioFormat.frameFloats])
        guard self.next != nil else { return silence(frame) }
        if !playing {
            // Waiting (at the start, or after the sender's silence) until the delay is there;
            // a first frame that never came is then concealed as lost. A backlog (frames that
            // waited while nothing played them) is dropped, not played late.
            guard bufferedFrames >= targetFrames else { return silence(frame) }
            dropBacklog(nowNs: nowNs)
            playing = true
            concealedRun = 0
        }
        guard let next else { return silence(frame) }
        if slotHolds(next) {
            adjustForSteadyArrival()
            let current = self.next ?? next
            let sequence = sequences[slot(current)]
            let arrival = packets.stamp(in: slot(current))
            let delay = nowNs > arrival ? nowNs - arrival : 0
            decode(current, into: frame)
            lastWasSilent = isSilent(frame)
            counters.framesPlayed += 1
            concealedRun = 0
            return .frame(sequence: sequence, delayNs: delay)
        }
        if bufferedFrames > 1 {
            // A hole with frames after it: lost in transit (or still on its way, too late now).
            let recover = slotHolds(next &+ 1)
            conceal(into: frame, fromNextPacket: recover ? payload(slot(next &+ 1)) : nil)
            self.next = next &+ 1
            awaited = nil
            counters.framesConcealed += 1
            return .concealed
        }
        // Nothing to play yet.
        if lastWasSilent || concealedRun >= JitterBuffer.maxConcealedRun {
            // The sender's gate closed (it sent silence, then nothing), or it is gone: wait in
            // silence, and start again at the delay when frames come.
            if playing && lastWasSilent { counters.gaps += 1 }
            playing = false
            return silence(frame)
        }
        // An underrun: conceal this tick without moving on (the delay grew by a frame). If the
        // frame waited for still comes, it was late: the target grows; if a later one comes
        // first, it was lost.
        conceal(into: frame, fromNextPacket: nil)
        concealedRun += 1
        counters.framesInserted += 1
        awaited = next
        return .concealed
    }

    /// The player stopped pulling for a while (nothing played it): forgets the frames held;
    /// playing starts again, at the target delay, with the frames that come next. The delay's
    /// estimate and the counts stay.
    public func pause() {
        packets.emptyAll()
        next = nil
        newest = nil
        playing = false
        concealedRun = 0
        lastWasSilent = false
        steadyPulls = 0
        backlogPulls = 0
        leastExcess = .max
        awaited = nil
    }

    /// Forgets everything received (a new stream begins); the counts stay.
    public func reset() {
        pause()
        transitCount = 0
        transitIndex = 0
        jitterNs = 0
        targetFrames = 2
    }

    // MARK: - Inside

    private func slot(_ sequence: UInt32) -> Int { Int(sequence % UInt32(JitterBuffer.capacity)) }

    private func slotHolds(_ sequence: UInt32) -> Bool {
        let index = slot(sequence)
        return packets.isFilled(index) && sequences[index] == sequence
    }

    private func payload(_ index: Int) -> UnsafeRawBufferPointer { packets.bytes(in: index) }

    private func restart(at sequence: UInt32) {
        packets.emptyAll()
        next = sequence
        newest = sequence
        playing = false
    }

    /// Passes over frames (and holes before them) that have already waited longer than the
    /// target delay, while more than the target is held; the frames passed over are counted
    /// dropped. A frame still on its way (a hole with nothing old behind it) is waited for.
    private func dropBacklog(nowNs: UInt64) {
        let longest = UInt64(targetFrames + 1) * UInt64(AudioFormat.frameDurationNs)
        while bufferedFrames > targetFrames, let next {
            let held = slotHolds(next) ? next : next &+ 1
            guard slotHolds(held), nowNs &- packets.stamp(in: slot(held)) > longest else { return }
            if held == next {
                packets.empty(slot(next))
                counters.framesDropped += 1
            }
            self.next = next &+ 1
        }
    }

    private func silence(_ frame: UnsafeMutableBufferPointer<Float>) -> Played {
        frame.update(repeating: 0)
        return .silence
    }

    /// Decodes the frame `sequence` (held) into `frame`, frees its slot and moves on.
    private func decode(_ sequence: UInt32, into frame: UnsafeMutableBufferPointer<Float>) {
        let index = slot(sequence)
        if (try? decoder.decode(payload(index), into: frame)) != AudioFormat.frameSamples {
            frame.update(repeating: 0)
        }
        packets.empty(index)
        next = sequence &+ 1
    }

    private func conceal(into frame: UnsafeMutableBufferPointer<Float>, fromNextPacket packet: UnsafeRawBufferPointer?) {
        let decoded = try? decoder.decode(packet, into: frame, lostSamples: AudioFormat.frameSamples, recoverPrevious: packet != nil)
        if decoded != AudioFormat.frameSamples { frame.update(repeating: 0) }
    }

    private func isSilent(_ frame: UnsafeMutableBufferPointer<Float>) -> Bool {
        for sample in frame where abs(sample) > 1e-6 { return false }
        return true
    }

    /// Arrival minus capture time of one frame: the jitter is how far it is above the
    /// smallest of the window, and the target delay covers the largest such excess.
    private func noteTransit(_ transit: Int64) {
        transits[transitIndex] = transit
        transitIndex = (transitIndex + 1) % JitterBuffer.transitWindow
        transitCount = min(transitCount + 1, JitterBuffer.transitWindow)
        var smallest = Int64.max
        var largest = Int64.min
        for index in 0..<transitCount {
            smallest = min(smallest, transits[index])
            largest = max(largest, transits[index])
        }
        // (Capture times are the sender's: a wild one must not overflow. A second of spread is
        // more than the longest delay anyway.)
        let spread = largest &- smallest
        jitterNs = spread < 0 || spread > 1_000_000_000 ? 1_000_000_000 : spread  // signed: arrival differences
        // Cover the jitter plus the frame being played: grow at once, shrink in adjustForSteadyArrival.
        let needed = framesCoveringJitter()
        if needed > targetFrames { targetFrames = needed }
    }

    /// The delay, in frames, that covers the jitter seen plus the frame being played.
    private func framesCoveringJitter() -> Int {
        let frame = Int64(AudioFormat.frameDurationNs)
        let frames = Int((jitterNs + frame - 1) / frame) + 1
        return min(max(frames, JitterBuffer.delayFrames.lowerBound), JitterBuffer.delayFrames.upperBound)
    }

    /// While playing: after 2 s of more buffered than the jitter needs, the target comes down
    /// a frame; frames held past the target through a whole backlog window are dropped (decoded
    /// and discarded, so the decoder's state runs on) down to the target.
    private func adjustForSteadyArrival() {
        let needed = framesCoveringJitter()
        if targetFrames > needed && bufferedFrames <= targetFrames {
            steadyPulls += 1
            if steadyPulls >= 200 {
                targetFrames -= 1
                steadyPulls = 0
            }
        } else {
            steadyPulls = 0
        }
        leastExcess = min(leastExcess, bufferedFrames - targetFrames)
        backlogPulls += 1
        guard backlogPulls >= JitterBuffer.backlogWindowPulls else { return }
        var drops = leastExcess - 1
        backlogPulls = 0
        leastExcess = .max
        while drops > 0, let next, slotHolds(next), slotHolds(next &+ 1) {
            decode(next, into: scratch)
            counters.framesDropped += 1
            drops -= 1
        }
    }
}
