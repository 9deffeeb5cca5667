import DeskAudio

/// The file side of `deskaudio record`: takes AudioFrames from the library and writes their
/// Opus packets. Pauses of the zero gate become silence packets, so the file keeps the
/// capture's timeline: N seconds recorded play for N seconds. Thread-safe: the library's
/// thread calls `take`, the main thread the rest.
final class Recording: Sendable {
    private let silence: [UInt8]
    private let silenceSamples: Int
    private let frameLimit: UInt64
    /// What the threads share: the file and its counts, reachable only through the lock.
    private struct File {
        let writer: OggOpusWriter
        var nextSampleClock: UInt64?
        var framesWritten: UInt64 = 0
        var silenceFrames: UInt64 = 0
    }
    private let file: LockOwned<File>

    /// Records into `writer`, at most `frameLimit` frames; `silence` is an Opus packet of
    /// one silent frame of `silenceSamples` samples per channel (the capture's frame length).
    init(writer: sending OggOpusWriter, silence: [UInt8], silenceSamples: Int, frameLimit: UInt64) {
        file = LockOwned(File(writer: writer))
        self.silence = silence
        self.silenceSamples = silenceSamples
        self.frameLimit = frameLimit
    }

    /// True once the frame limit is reached or writing failed.
    var isComplete: Bool { file.withLock { isFull($0) } }

    /// Frames in the file so far, of them silence for gated time, and bytes.
    var progress: (frames: UInt64, silence: UInt64, bytes: Int) {
        file.withLock { ($0.framesWritten, $0.silenceFrames, $0.writer.bytesWritten) }
    }

    private func isFull(_ file: File) -> Bool { file.framesWritten >= frameLimit || file.writer.failure != nil }

    /// Writes one AudioFrame's packet, after silence for any frames the gate held back.
    func take(_ bytes: UnsafeRawBufferPointer) {
        let bytes = CallScoped(bytes)
        file.withLock { take(bytes.value, &$0) }
    }

    private func take(_ bytes: UnsafeRawBufferPointer, _ file: inout File) {
        guard !isFull(file) else { return }
        guard let frame = try? AudioFrameParser.parse(bytes) else { return }  // the library makes none
        if let expected = file.nextSampleClock, frame.header.sampleClock > expected {
            writeSilence(frames: (frame.header.sampleClock - expected) / UInt64(silenceSamples), &file)
        }
        file.nextSampleClock = frame.header.sampleClock + UInt64(frame.header.frameSamples)
        guard !isFull(file) else { return }
        file.writer.write(frame.payload, samples: Int(frame.header.frameSamples))
        file.framesWritten += 1
    }

    /// Pads with silence up to `capturedFrames` (gated frames at the end; at least one
    /// frame in all), then closes the file.
    func finish(capturedFrames: UInt64) throws(CLIFailure) {
        try file.withLock { (file) throws(CLIFailure) in
            let target = max(1, min(capturedFrames, frameLimit))
            if file.framesWritten < target { writeSilence(frames: target - file.framesWritten, &file) }
            try file.writer.finish()
        }
    }

    private func writeSilence(frames: UInt64, _ file: inout File) {
        for _ in 0..<min(frames, frameLimit - min(file.framesWritten, frameLimit)) {
            silence.withUnsafeBytes { file.writer.write($0, samples: silenceSamples) }
            file.framesWritten += 1
            file.silenceFrames += 1
        }
    }
}
