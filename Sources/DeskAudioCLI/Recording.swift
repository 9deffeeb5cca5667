import DeskAudio
import Synchronization

/// The file side of `deskaudio record`: takes AudioFrames from the library and writes their
/// Opus packets. Pauses of the zero gate become silence packets, so the file keeps the
/// capture's timeline: N seconds recorded play for N seconds. Thread-safe: the library's
/// thread calls `take`, the main thread the rest.
final class Recording: @unchecked Sendable {
    private let writer: OggOpusWriter
    private let silence: [UInt8]
    private let frameLimit: UInt64
    private var nextSampleClock: UInt64?
    private var framesWritten: UInt64 = 0
    private var silenceFrames: UInt64 = 0
    private let lock = Mutex<Void>(())

    /// Records into `writer`, at most `frameLimit` frames; `silence` is an Opus packet of
    /// one silent 10 ms frame.
    init(writer: OggOpusWriter, silence: [UInt8], frameLimit: UInt64) {
        self.writer = writer
        self.silence = silence
        self.frameLimit = frameLimit
    }

    /// True once the frame limit is reached or writing failed.
    var isComplete: Bool { lock.withLock { _ in isFull } }

    /// Frames in the file so far, of them silence for gated time, and bytes.
    var progress: (frames: UInt64, silence: UInt64, bytes: Int) {
        lock.withLock { _ in (framesWritten, silenceFrames, writer.bytesWritten) }
    }

    private var isFull: Bool { framesWritten >= frameLimit || writer.failure != nil }

    /// Writes one AudioFrame's packet, after silence for any frames the gate held back.
    func take(_ bytes: UnsafeRawBufferPointer) {
        lock.withLock { _ in takeLocked(bytes) }
    }

    private func takeLocked(_ bytes: UnsafeRawBufferPointer) {
        guard !isFull else { return }
        guard let frame = try? AudioFrameParser.parse(bytes) else { return }  // the library makes none
        let frameSamples = UInt64(AudioFormat.frameSamples)
        if let expected = nextSampleClock, frame.header.sampleClock > expected {
            writeSilence(frames: (frame.header.sampleClock - expected) / frameSamples)
        }
        nextSampleClock = frame.header.sampleClock + frameSamples
        guard !isFull else { return }
        writer.write(frame.payload, samples: AudioFormat.frameSamples)
        framesWritten += 1
    }

    /// Pads with silence up to `capturedFrames` (gated frames at the end; at least one
    /// frame in all), then closes the file.
    func finish(capturedFrames: UInt64) throws(CLIFailure) {
        try lock.withLock { _ throws(CLIFailure) in try finishLocked(capturedFrames: capturedFrames) }
    }

    private func finishLocked(capturedFrames: UInt64) throws(CLIFailure) {
        let target = max(1, min(capturedFrames, frameLimit))
        if framesWritten < target { writeSilence(frames: target - framesWritten) }
        try writer.finish()
    }

    private func writeSilence(frames: UInt64) {
        for _ in 0..<min(frames, frameLimit - min(framesWritten, frameLimit)) {
            silence.withUnsafeBytes { writer.write($0, samples: AudioFormat.frameSamples) }
            framesWritten += 1
            silenceFrames += 1
        }
    }
}
