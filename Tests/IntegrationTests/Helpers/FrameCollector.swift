import DeskAudio
import DeskAudioC
import Foundation
import Testing

/// Collects AudioFrames delivered through the C callback, for checks after capture.
final class FrameCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var frames: [[UInt8]] = []
    private var arrivals: [Date] = []
    /// What enable_audio returned when called from inside the callback on hand-over.
    private(set) var statusFromInsideCallback: Int32?
    /// When set, the first callback replaces itself with this collector's callback.
    var handOverTo: FrameCollector?
    /// When true, the first callback also stops capture (enable_audio(false, false)) before
    /// it hands over.
    var stopsCaptureOnHandOver = false
    /// Seconds to block inside the callback after receiving the frame with this index
    /// (0-based), as a slow host would. Set before capture starts.
    var stalls: [Int: Double] = [:]
    /// The gaps the server made in the capture's audio while it ran, by kind (`serverGaps()`
    /// over the capture; set by capture(mic:app:play:)).
    var serverGaps: (skippedFrames: UInt64, zeroCycles: UInt64) = (0, 0)
    /// Those gaps in all: frames' worth skipped and cycles of zeros (`serverSkips()`).
    var serverSkips: UInt64 { serverGaps.skippedFrames + serverGaps.zeroCycles }
    /// What the app + mic mix filled with silence and dropped late while it ran (`mixerGaps()`
    /// over the capture).
    var mixerGaps: (silenceFilled: UInt64, droppedLate: UInt64) = (0, 0)

    /// The user_data pointer for set_audio_callback (unretained: keep the collector alive).
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The C callback: user_data is a FrameCollector.
    static let callback: deskaudio_frame_callback = { frame, length, userData in
        let collector = Unmanaged<FrameCollector>.fromOpaque(userData!).takeUnretainedValue()
        collector.receive(Array(UnsafeBufferPointer(start: frame, count: length)))
    }

    private func receive(_ bytes: [UInt8]) {
        lock.lock()
        frames.append(bytes)
        arrivals.append(Date())
        let successor = handOverTo
        let stopsCapture = stopsCaptureOnHandOver
        handOverTo = nil
        let stall = stalls[frames.count - 1]
        lock.unlock()
        if let stall { Thread.sleep(forTimeInterval: stall) }
        if let successor {
            // Stopping is allowed from inside; starting (a source that is not running) is not.
            let status = stopsCapture ? enable_audio(false, false) : enable_audio(true, true)
            lock.lock()
            statusFromInsideCallback = status
            lock.unlock()
            set_audio_callback(FrameCollector.callback, successor.userData)
        }
    }

    /// Frames received so far.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return frames.count
    }

    /// When each frame arrived, in arrival order.
    var arrivalTimes: [Date] {
        lock.lock()
        defer { lock.unlock() }
        return arrivals
    }

    /// Seconds since the last frame arrived (infinity before the first).
    var secondsSinceLastFrame: Double {
        lock.lock()
        defer { lock.unlock() }
        return arrivals.last.map { Date().timeIntervalSince($0) } ?? .infinity
    }

    /// The frames' bytes as received, in order.
    func raw() -> [[UInt8]] {
        lock.lock()
        defer { lock.unlock() }
        return frames
    }

    /// Parsed frames, in arrival order.
    func parsed() throws -> [(header: AudioFrameHeader, payload: [UInt8])] {
        lock.lock()
        let copy = frames
        lock.unlock()
        return try copy.map { bytes in
            try bytes.withUnsafeBytes { raw in
                let frame = try AudioFrameParser.parse(raw)
                return (frame.header, Array(frame.payload))
            }
        }
    }

    /// Decodes every frame in order (of any length) into interleaved 48 kHz stereo.
    func decoded() throws -> [Float] {
        let decoder = try OpusFrameDecoder()
        var output = [Float](repeating: 0, count: FrameDuration.longest.floats)
        var samples: [Float] = []
        for frame in try parsed() {
            let decoded = try frame.payload.withUnsafeBytes { packet in
                try output.withUnsafeMutableBufferPointer { try decoder.decode(packet, into: $0) }
            }
            samples += output[0..<(decoded * AudioFormat.channels)]
        }
        return samples
    }
}

/// Every hole in `frames`' sequence is a frame the library dropped for a frame callback more
/// than 0.5 s behind (a loaded machine not running the delivery thread, not a library fault):
/// counted in `droppedForCallback` (frames_dropped_slow_callback over the run), its audio
/// missing from the sample clock, the frame after it flagged AFTER_LOSS and no other. The
/// drops themselves are measured against a gross budget of one queue's worth. Returns them.
@discardableResult
func expectHolesAreCountedCallbackDrops(
    _ frames: [(header: AudioFrameHeader, payload: [UInt8])], droppedForCallback: UInt64,
    test: String = #function, sourceLocation: SourceLocation = #_sourceLocation
) -> Int {
    var holes = 0
    var flaggedWrongly: [Int] = []
    for index in frames.indices.dropFirst() {
        let (before, after) = (frames[index - 1].header, frames[index].header)
        let missing = Int(after.sequence &- before.sequence) - 1
        holes += max(missing, 0)
        let clockOK = after.sampleClock == before.sampleClock + UInt64(missing + 1) * UInt64(after.frameSamples)
        if missing < 0 || !clockOK || after.flags.contains(.afterLoss) != (missing > 0) { flaggedWrongly.append(index) }
    }
    #expect(UInt64(holes) == droppedForCallback, "sequence holes \(holes), frames the library counted as dropped for the callback \(droppedForCallback)", sourceLocation: sourceLocation)
    #expect(flaggedWrongly.isEmpty, "frames out of order, with their audio's sample clock off, or flagged AFTER_LOSS where no frame was dropped before them (or not where one was): \(flaggedWrongly.prefix(10))", sourceLocation: sourceLocation)
    expectWithinBudget(
        "frames dropped for a frame callback 0.5 s behind", Double(holes), unit: "frames", .atMost(Double(DESKAUDIO_QUEUE_FRAMES)),
        test: test, sourceLocation: sourceLocation)
    return holes
}
