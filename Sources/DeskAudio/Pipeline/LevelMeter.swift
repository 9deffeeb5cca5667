import Glibc
import Synchronization

/// Peak and RMS level of one source over the last second, as the thread that measures it
/// (`LevelMeter`) last published them: read from any thread, without a lock.
public final class PublishedLevel: Sendable {
    private let peakBits = Atomic<UInt32>(0)  // Float bit patterns
    private let rmsBits = Atomic<UInt32>(0)

    /// Silence, until a meter publishes.
    public init() {}

    /// Highest sample magnitude over the last second (1.0 = full scale).
    public var peak: Float { Float(bitPattern: peakBits.load(ordering: .relaxed)) }
    /// Root mean square over the last second (a full-scale sine gives 0.707).
    public var rms: Float { Float(bitPattern: rmsBits.load(ordering: .relaxed)) }

    fileprivate func publish(peak: Float, rms: Float) {
        peakBits.store(peak.bitPattern, ordering: .relaxed)
        rmsBits.store(rms.bitPattern, ordering: .relaxed)
    }
}

/// Measures one source's peak and RMS over the last second in ten 100 ms blocks, for the one
/// thread that feeds it (whoever owns it), and publishes each completed block's result to
/// `published`, which any thread reads. `measure` takes no lock and allocates nothing.
public final class LevelMeter {
    /// Floats (both channels) per block: 100 ms at 48 kHz stereo.
    static let blockFloats = AudioFormat.sampleRate / 10 * AudioFormat.channels
    /// Blocks in the window: one second.
    static let blockCount = 10

    /// The levels, for any thread.
    public let published: PublishedLevel
    private let peaks: UnsafeMutableBufferPointer<Float>
    private let squares: UnsafeMutableBufferPointer<Double>
    private var nextBlock = 0
    private var blockPeak: Float = 0
    private var blockSquares: Double = 0
    private var blockFilled = 0

    /// A meter that has heard only silence, publishing to `published`.
    public init(publishingTo published: PublishedLevel = PublishedLevel()) {
        self.published = published
        peaks = .zeroed(LevelMeter.blockCount)
        squares = .zeroed(LevelMeter.blockCount)
    }

    deinit {
        peaks.deallocate()
        squares.deallocate()
    }

    /// Feeding thread: takes in interleaved samples; each completed block updates the levels.
    public func measure(_ samples: UnsafeBufferPointer<Float>) {
        var start = 0
        while start < samples.count {
            let count = min(samples.count - start, LevelMeter.blockFloats - blockFilled)
            let (peak, squares) = LevelMeter.peakAndSquares(
                UnsafeBufferPointer(rebasing: samples[start..<start + count]))
            blockPeak = max(blockPeak, peak)
            blockSquares += Double(squares)
            blockFilled += count
            start += count
            if blockFilled == LevelMeter.blockFloats { finishBlock() }
        }
    }

    /// Feeding thread, or while nothing feeds: back to silence.
    public func reset() {
        peaks.update(repeating: 0)
        squares.update(repeating: 0)
        blockPeak = 0
        blockSquares = 0
        blockFilled = 0
        published.publish(peak: 0, rms: 0)
    }

    /// Highest sample magnitude over the last second, as published.
    public var peak: Float { published.peak }
    /// Root mean square over the last second, as published.
    public var rms: Float { published.rms }

    /// A linear level in dBFS, with silence reported as `floor`.
    public static func dBFS(_ level: Float, floor: Float = -120) -> Float {
        level > 0 ? max(20 * log10f(level), floor) : floor
    }

    /// The highest magnitude in `samples` and the sum of their squares, in one pass of eight
    /// lanes: magnitudes compare as bit patterns (a float without its sign bit orders like an
    /// unsigned integer).
    private static func peakAndSquares(_ samples: UnsafeBufferPointer<Float>) -> (Float, Float) {
        guard let base = samples.baseAddress else { return (0, 0) }
        let vectorFloats = samples.count / 8 * 8
        let magnitude = SIMD8<UInt32>(repeating: 0x7FFF_FFFF)
        var peaks = SIMD8<UInt32>(repeating: 0)
        var squares = SIMD8<Float>(repeating: 0)
        for offset in stride(from: 0, to: vectorFloats, by: 8) {
            let vector = UnsafeRawPointer(base + offset).loadUnaligned(as: SIMD8<Float>.self)
            squares += vector * vector
            peaks = pointwiseMax(peaks, unsafeBitCast(vector, to: SIMD8<UInt32>.self) & magnitude)
        }
        var peakBits = peaks.max()
        var sum = squares.sum()
        for sample in samples[vectorFloats...] {
            peakBits = max(peakBits, sample.bitPattern & 0x7FFF_FFFF)
            sum += sample * sample
        }
        return (Float(bitPattern: peakBits), sum)
    }

    private func finishBlock() {
        peaks[nextBlock] = blockPeak
        squares[nextBlock] = blockSquares
        nextBlock = (nextBlock + 1) % LevelMeter.blockCount
        blockPeak = 0
        blockSquares = 0
        blockFilled = 0
        var peak: Float = 0
        var sum: Double = 0
        for block in 0..<LevelMeter.blockCount {
            peak = max(peak, peaks[block])
            sum += squares[block]
        }
        let rms = Float((sum / Double(LevelMeter.blockFloats * LevelMeter.blockCount)).squareRoot())
        published.publish(peak: peak, rms: rms)
    }
}
