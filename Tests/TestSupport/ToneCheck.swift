/// Finds a tone in decoded audio, 10 ms at a time, and measures it.
public struct ToneCheck {
    /// RMS (dBFS) of each 10 ms frame of the left channel.
    public let frameLevels: [Double]
    /// Indices of frames above the threshold.
    public let loudFrames: [Int]
    /// Left channel of the frames strictly inside the loud run (edges trimmed).
    public let interior: [Float]
    /// The frame `interior` starts at (nil when there is none).
    public let interiorStart: Int?

    /// Splits interleaved stereo `samples` into 10 ms frames; frames above `threshold` dBFS
    /// are loud; `trim` frames at each end of the loud run are left out of `interior`.
    public init(_ samples: [Float], threshold: Double = -30, trim: Int = 2) {
        let frameFloats = 960
        var levels: [Double] = []
        var start = 0
        while start + frameFloats <= samples.count {
            levels.append(
                SignalAnalysis.rmsDecibels(SignalAnalysis.left(samples[start..<start + frameFloats])))
            start += frameFloats
        }
        frameLevels = levels
        loudFrames = levels.indices.filter { levels[$0] > threshold }
        if let first = loudFrames.first, let last = loudFrames.last, last - first > 2 * trim {
            interior = SignalAnalysis.left(
                samples[((first + trim) * frameFloats)..<((last - trim + 1) * frameFloats)])
            interiorStart = first + trim
        } else {
            interior = []
            interiorStart = nil
        }
    }

    /// The 10 ms blocks from the first loud one to the last, the quiet ones inside included
    /// (0 when none is loud): the sound's length on the recording's own timeline.
    public var loudSpan: Int {
        guard let first = loudFrames.first, let last = loudFrames.last else { return 0 }
        return last - first + 1
    }

    /// How many 10 ms blocks longer than `seconds` played the loud run came out, beyond one for
    /// where its ends fall in blocks (0 if no longer): silence inside that delayed the rest of
    /// the sound, as a player's missed periods do on the sink's timeline. Zeros in place of
    /// part of it leave the length as it was.
    public func blocksLonger(thanPlayed seconds: Double) -> Int {
        max(loudSpan - Int((seconds * 100).rounded()) - 1, 0)
    }

    /// True when the loud frames form one run with no quiet frame inside.
    public var isContiguous: Bool { loudSpan > 0 && loudSpan == loudFrames.count }

    /// Frames inside the loud run (edges trimmed) whose level is off `expected` by more than `tolerance` dB.
    public func dropouts(expected: Double, tolerance: Double, trim: Int = 2) -> [Int] {
        guard let first = loudFrames.first, let last = loudFrames.last, last - first > 2 * trim else {
            return []
        }
        return ((first + trim)...(last - trim)).filter { abs(frameLevels[$0] - expected) > tolerance }
    }

    /// The gaps inside the loud run (edges trimmed): runs of adjacent 10 ms blocks more than
    /// `tolerance` dB below `expected` (one 5 ms silence may fall in one block or straddle two,
    /// as the blocks happen to align).
    public func gaps(below expected: Double, tolerance: Double = 1, trim: Int = 2) -> [[Int]] {
        Self.runs(of: dropouts(expected: expected, tolerance: tolerance, trim: trim).filter { frameLevels[$0] < expected })
    }

    /// `blocks` (ascending) grouped into runs of adjacent ones.
    public static func runs(of blocks: [Int]) -> [[Int]] {
        var runs: [[Int]] = []
        for block in blocks {
            if let last = runs.last?.last, last + 1 == block { runs[runs.count - 1].append(block) } else { runs.append([block]) }
        }
        return runs
    }

    /// How many of `gaps` (this check's own) lie within `toleranceMs` of a break of `tap`'s
    /// tone (ToneBreak: a quiet run or a jump of its phase) that is inside none of `tapGaps`
    /// (the tap's own gaps), each break counted once. Both are timed from their tone's first
    /// loud frame: `tap` is another recorder of the same sound at the same time.
    public func gaps(
        _ gaps: [[Int]], nearBreaksOf tap: ToneCheck, outside tapGaps: [[Int]], frequency: Double,
        toleranceMs: Double = 30
    ) -> Int {
        guard !gaps.isEmpty, let tapStart = tap.interiorStart, let tapFirst = tap.loudFrames.first,
            let first = loudFrames.first
        else { return 0 }
        var breaks = ToneBreak.find(in: tap.interior, frequency: frequency)
            .map { Double(tapStart - tapFirst) * 10 + Double($0.startSample) / 48 }
            .filter { at in !tapGaps.contains { Self.span(of: $0, from: tapFirst).contains(at) } }
        var near = 0
        for gap in gaps {
            let window = Self.span(of: gap, from: first, widenedBy: toleranceMs)
            if let index = breaks.firstIndex(where: window.contains) {
                breaks.remove(at: index)
                near += 1
            }
        }
        return near
    }

    /// How many blocks of `gaps` (this check's own) `tap` heard as a gap too: a gap of ours
    /// within `toleranceMs` of one of `tapGaps` (the tap's own), both timed from their tone's
    /// first loud frame, counts up to that gap's length and a block either side (a run
    /// straddles blocks as they happen to align); each of `tapGaps` counts once. Such silence
    /// was on the sink itself (its player missed periods), so every recorder of it hears it.
    public func blocks(in gaps: [[Int]], alsoIn tapGaps: [[Int]], of tap: ToneCheck, toleranceMs: Double = 30) -> Int {
        guard let first = loudFrames.first, let tapFirst = tap.loudFrames.first else { return 0 }
        var unmatched = tapGaps
        var blocks = 0
        for gap in gaps {
            let window = Self.span(of: gap, from: first, widenedBy: toleranceMs)
            if let index = unmatched.firstIndex(where: { Self.span(of: $0, from: tapFirst).overlaps(window) }) {
                blocks += min(gap.count, unmatched[index].count + 2)
                unmatched.remove(at: index)
            }
        }
        return blocks
    }

    /// The time `run` (adjacent 10 ms blocks) spans, in ms from the block `first` (a tone's
    /// first loud frame), widened by `margin` ms either side.
    private static func span(of run: [Int], from first: Int, widenedBy margin: Double = 0) -> ClosedRange<Double> {
        (Double(run[0] - first) * 10 - margin)...(Double(run[run.count - 1] + 1 - first) * 10 + margin)
    }

    /// The median level (dBFS) of the blocks inside the loud run: the tone's level, whatever
    /// a gap does to its mean.
    public var medianLevel: Double {
        guard let first = loudFrames.first, let last = loudFrames.last, last > first else { return -.infinity }
        let levels = frameLevels[first...last].sorted()
        return levels[levels.count / 2]
    }

    /// Each frame's index and level, for a failure message: "112: -10.3 dBFS".
    public func describe(_ frames: [Int]) -> String {
        frames.map { "\($0): \((frameLevels[$0] * 10).rounded() / 10) dBFS" }.joined(separator: ", ")
    }
}
