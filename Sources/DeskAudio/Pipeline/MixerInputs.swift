/// The sources a `SourceMixer` pull mixes: up to `capacity` rings, each with the frame flags
/// its audio carries and a stable slot (0..<capacity) under which the mixer remembers what
/// that source owes. Storage is allocated once; `removeAll` and `append` allocate nothing and
/// retain nothing: the caller keeps the rings alive while they are listed.
public final class MixerInputs {
    /// The most sources one pull mixes.
    public static let capacity = 16
    private let rings: UnsafeMutablePointer<Unmanaged<SampleRing>>
    private let flagStorage: UnsafeMutablePointer<AudioFrameHeader.Flags>
    private let slotStorage: UnsafeMutablePointer<Int>
    /// Sources listed.
    public private(set) var count = 0

    /// No sources.
    public init() {
        rings = .allocate(capacity: MixerInputs.capacity)
        flagStorage = .allocate(capacity: MixerInputs.capacity)
        slotStorage = .allocate(capacity: MixerInputs.capacity)
    }

    deinit {
        rings.deallocate()
        flagStorage.deallocate()
        slotStorage.deallocate()
    }

    /// Lists no sources.
    public func removeAll() { count = 0 }

    /// Lists `ring`, whose audio carries `flags`, under `slot` (unique among the inputs).
    public func append(_ ring: SampleRing, flags: AudioFrameHeader.Flags, slot: Int) {
        append(Unmanaged.passUnretained(ring), flags: flags, slot: slot)
    }

    /// Lists an unretained ring (no reference count touched: the worker's hot path).
    func append(_ ring: Unmanaged<SampleRing>, flags: AudioFrameHeader.Flags, slot: Int) {
        precondition(count < MixerInputs.capacity && (0..<MixerInputs.capacity).contains(slot))
        rings[count] = ring
        flagStorage[count] = flags
        slotStorage[count] = slot
        count += 1
    }

    /// The ring of input `index`.
    @inline(__always)
    public func ring(_ index: Int) -> SampleRing { rings[index].takeUnretainedValue() }
    /// The flags of input `index`.
    @inline(__always)
    public func flags(_ index: Int) -> AudioFrameHeader.Flags { flagStorage[index] }
    /// The slot of input `index`.
    @inline(__always)
    public func slot(_ index: Int) -> Int { slotStorage[index] }

    /// What the fullest input holds, in floats (0 for none).
    public var mostFloatsWaiting: Int {
        var most = 0
        for index in 0..<count { most = max(most, ring(index).availableFloats) }
        return most
    }
}
