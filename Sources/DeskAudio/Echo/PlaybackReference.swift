/// What the viewer's speakers play, mono at 48 kHz, on the CLOCK_MONOTONIC time each sample
/// leaves them: the last 2.7 s, read back by time for the echo canceller. The samples run on
/// one after another; a push's time within `stampJitterNs` of where they run to only slews
/// their timeline toward it (a player's stamps wobble by milliseconds on a loaded machine,
/// and an adaptive filter cannot follow a reference that jumps by them: R-ECHO-STAMPS). A
/// push due later than that is after a pause, which is silence; one due earlier steps the
/// timeline back to its times. Pure: no clock, no allocation after init.
struct PlaybackReference {
    static let capacity = 1 << 17

    private let samples = UnsafeMutableBufferPointer<Float>.allocate(capacity: capacity)
    // Samples written since the start; the sample at index `written - 1` leaves the speakers
    // at `lastTimeNs`.
    private(set) var written: UInt64 = 0
    private var lastTimeNs: UInt64 = 0
    /// Samples of silence put in for pauses in what was pushed.
    private(set) var pausedSamples: UInt64 = 0

    private static let nsPerSample = 1e9 / Double(AudioFormat.sampleRate)
    /// How far a push's time may be from where the samples before it run to and still be the
    /// same run, stamped with some jitter.
    static let stampJitterNs = 2e6
    /// The part of such a difference the timeline moves by at each push.
    static let slewFraction = 1.0 / 16

    init() { samples.initialize(repeating: 0) }

    /// Frees the buffer; call once, when the owner goes.
    func deallocate() { samples.deallocate() }

    /// Forgets what was played.
    mutating func reset() {
        written = 0
        lastTimeNs = 0
        pausedSamples = 0
    }

    /// Appends `mono` samples whose last one leaves the speakers at `endTimeNs`.
    mutating func append(_ mono: UnsafeBufferPointer<Float>, endTimeNs: UInt64) {
        guard !mono.isEmpty else { return }
        var end = endTimeNs
        if written > 0 {
            // How much later than the samples before it run to the push says it ends.
            let runsToNs = Double(lastTimeNs) + Double(mono.count) * Self.nsPerSample
            let lateNs = Double(endTimeNs) - runsToNs
            if lateNs > Self.stampJitterNs {
                let pause = min(UInt64((lateNs / Self.nsPerSample).rounded()), UInt64(Self.capacity))
                for _ in 0..<pause { put(0) }
                pausedSamples += pause
            } else if lateNs >= -Self.stampJitterNs {
                end = UInt64((runsToNs + lateNs * Self.slewFraction).rounded())
            }
        }
        for sample in mono { put(sample) }
        lastTimeNs = end
    }

    /// Fills `block` with the samples that left the speakers in the `block.count` samples
    /// ending at `endTimeNs`; zeros where none are held (too old, or not pushed yet).
    /// Returns how many were missing.
    @discardableResult
    func read(into block: UnsafeMutableBufferPointer<Float>, endingAt endTimeNs: UInt64) -> Int {
        guard written > 0 else {
            block.update(repeating: 0)
            return block.count
        }
        let behind = ((Double(lastTimeNs) - Double(endTimeNs)) / Self.nsPerSample).rounded()
        let last = Int64(written) - 1 - Int64(behind)
        let oldest = max(Int64(written) - Int64(Self.capacity), 0)
        var missing = 0
        for offset in 0..<block.count {
            let index = last - Int64(block.count - 1 - offset)
            if index >= oldest && index < Int64(written) {
                block[offset] = samples[Int(index & Int64(Self.capacity - 1))]
            } else {
                block[offset] = 0
                missing += 1
            }
        }
        return missing
    }

    private mutating func put(_ sample: Float) {
        samples[Int(written & UInt64(Self.capacity - 1))] = sample
        written += 1
    }
}
