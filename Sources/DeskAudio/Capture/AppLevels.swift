/// The level of one application stream that app audio records.
public struct AppLevel: Sendable, Equatable {
    /// The stream, as the server listed it when recording began.
    public var stream: PlaybackStream
    /// Highest sample magnitude over the last second, dBFS (−120 for silence).
    public var peakDBFS: Float
    /// Root mean square over the last second, dBFS (a full-scale sine is −3; −120 for silence).
    public var rmsDBFS: Float
}

/// One level meter per application stream a source records (`AppSelection.measuresLevels`):
/// the backend adds and removes them on its own thread, the thread that reads each stream
/// measures into its meter without a lock, and any thread reads the levels.
final class AppLevels: Sendable {
    private let meters = LockedValue<[UInt32: (stream: PlaybackStream, meter: LevelMeter)]>([:])

    /// The meter for `stream`, made if it has none yet.
    func meter(for stream: PlaybackStream) -> LevelMeter {
        meters.withLock { meters in
            if let entry = meters[stream.id] { return entry.meter }
            let meter = LevelMeter()
            meters[stream.id] = (stream, meter)
            return meter
        }
    }

    /// Forgets the stream with id `id` (no longer recorded).
    func remove(_ id: UInt32) {
        _ = meters.withLock { $0.removeValue(forKey: id) }
    }

    /// Forgets every stream (the capture stopped).
    func removeAll() {
        meters.withLock { $0.removeAll() }
    }

    /// Each recorded stream's level, by stream id.
    var levels: [AppLevel] {
        meters.withLock { meters in
            meters.values.map {
                AppLevel(
                    stream: $0.stream, peakDBFS: LevelMeter.dBFS($0.meter.peak), rmsDBFS: LevelMeter.dBFS($0.meter.rms))
            }
        }.sorted { $0.stream.id < $1.stream.id }
    }
}
