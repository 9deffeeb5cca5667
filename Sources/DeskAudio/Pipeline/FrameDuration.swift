/// How much audio one AudioFrame holds: one of the Opus frame lengths a host may choose.
/// Shorter frames cut latency and cost more CPU and bytes per second (each packet has its
/// own header); 10 ms is the default. The zero gate counts frames, so it closes after 800 of
/// them whatever their length: 2 s of silence at 2.5 ms, 4 s at 5 ms, 8 s at 10 ms and 16 s
/// at 20 ms.
public enum FrameDuration: Int, CaseIterable, Sendable {
    /// 2.5 ms: 120 samples per channel.
    case ms2_5 = 120
    /// 5 ms: 240 samples per channel (Moonlight's default packet length).
    case ms5 = 240
    /// 10 ms: 480 samples per channel (the default).
    case ms10 = 480
    /// 20 ms: 960 samples per channel.
    case ms20 = 960

    /// The longest frame: buffers sized for it hold any frame.
    public static let longest = FrameDuration.ms20

    /// The frame length given in microseconds (2500, 5000, 10000 or 20000); nil for others.
    public init?(microseconds: Int) {
        guard let match = FrameDuration.allCases.first(where: { $0.microseconds == microseconds }) else {
            return nil
        }
        self = match
    }

    /// The frame length given in milliseconds (2.5, 5, 10 or 20), as a command line takes it;
    /// nil for others.
    public init?(milliseconds: Double) {
        guard milliseconds.isFinite, milliseconds > 0, milliseconds <= 20 else { return nil }
        self.init(microseconds: Int((milliseconds * 1000).rounded()))
    }

    /// Samples per channel, at 48 kHz.
    public var samples: Int { rawValue }
    /// Interleaved floats in one frame.
    public var floats: Int { rawValue * AudioFormat.channels }
    /// Length in microseconds.
    public var microseconds: Int { rawValue * 1_000_000 / AudioFormat.sampleRate }
    /// Length in nanoseconds.
    public var nanoseconds: UInt64 { MonotonicClock.nanoseconds(ofSamples: UInt64(rawValue)) }
    /// For people: "2.5 ms", "10 ms".
    public var description: String {
        microseconds % 1000 == 0 ? "\(microseconds / 1000) ms" : "\(Double(microseconds) / 1000) ms"
    }
}
