import DeskAudio

/// The file side of `deskaudio record`: takes AudioFrames from the library and writes their
/// Opus packets. Pauses of the zero gate become silence packets, so the file keeps the
/// capture's timeline: N seconds recorded play for N seconds. Thread-safe: the library's
/// thread calls `take`, the main thread the rest.
final class Recording: @unchecked Sendable {
    private let writer: OggOpusWriter
    private let silence: [UInt8]
    private let silenceSamples: Int
    private let frameLimit: UInt64
    /// What the threads share: the file's counts (the writer is used only while it is locked).
    private struct Counts {
        var nextSampleClock: UInt64?
        var framesWritten: UInt64 = 0
        var silenceFrames: UInt64 = 0
    }
    private let counts = LockedValue(Counts())

    /// Records into `writer`, at most `frameLimit` frames; `silence` is an Opus packet of
    /// one silent frame of `silenceSamples` samples per channel (the capture's frame length).
    init(writer: OggOpusWriter, silence: [UInt8], silenceSamples: Int, frameLimit: UInt64) {
        self.writer = writer
        self.silence = silence
        self.silenceSamples = silenceSamples
        self.frameLimit = frameLimit
    }

    /// True once the frame limit is reached or writing failed.
    var isComplete: Bool { counts.withLock { isFull($0) } }

    /// Frames in the file so far, of them silence for gated time, and bytes.
    var progress: (frames: UInt64, silence: UInt64, bytes: Int) {
        counts.withLock { ($0.framesWritten, $0.silenceFrames, writer.bytesWritten) }
    }

    private func isFull(_ counts: Counts) -> Bool { counts.framesWritten >= frameLimit || writer.failure != nil }

    /// Writes one AudioFrame's packet, after silence for any frames the gate held back.
    func take(_ bytes: UnsafeRawBufferPointer) {
        counts.withLock { take(bytes, &$0) }
    }

    private func take(_ bytes: UnsafeRawBufferPointer, _ counts: inout Counts) {
        guard !isFull(counts) else { return }
        guard let frame = try? AudioFrameParser.parse(bytes) else { return }  // the library makes none
        if let expected = counts.nextSampleClock, frame.header.sampleClock > expected {
            writeSilence(frames: (frame.header.sampleClock - expected) / UInt64(silenceSamples), &counts)
        }
        counts.nextSampleClock = frame.header.sampleClock + UInt64(frame.header.frameSamples)
        guard !isFull(counts) else { return }
        writer.write(frame.payload, samples: Int(frame.header.frameSamples))
        counts.framesWritten += 1
    }

    /// Pads with silence up to `capturedFrames` (gated frames at the end; at least one
    /// frame in all), then closes the file.
    func finish(capturedFrames: UInt64) throws(CLIFailure) {
        try counts.withLock { (counts) throws(CLIFailure) in
            let target = max(1, min(capturedFrames, frameLimit))
            if counts.framesWritten < target { writeSilence(frames: target - counts.framesWritten, &counts) }
            try writer.finish()
        }
    }

    private func writeSilence(frames: UInt64, _ counts: inout Counts) {
        for _ in 0..<min(frames, frameLimit - min(counts.framesWritten, frameLimit)) {
            silence.withUnsafeBytes { writer.write($0, samples: silenceSamples) }
            counts.framesWritten += 1
            counts.silenceFrames += 1
        }
    }
}
