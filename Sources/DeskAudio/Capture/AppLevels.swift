/// The level of one application stream that app audio records.
public struct AppLevel: Sendable, Equatable {
    /// The stream, as the server listed it when recording began.
    public var stream: PlaybackStream
    /// Highest sample magnitude over the last second, dBFS (−120 for silence).
    public var peakDBFS: Float
    /// Root mean square over the last second, dBFS (a full-scale sine is −3; −120 for silence).
    public var rmsDBFS: Float
}

/// One level per application stream a source records (`AppSelection.measuresLevels`): the
/// backend adds and removes them on its own thread, the thread that reads each stream
/// measures into a meter of its own without a lock, and any thread reads the levels.
final class AppLevels: Sendable {
    private let published = LockedValue<[UInt32: (stream: PlaybackStream, level: PublishedLevel)]>([:])

    /// A meter for the thread that reads `stream`, publishing its level (made if it has none).
    func meter(for stream: PlaybackStream) -> LevelMeter {
        published.withLock { published in
            if let entry = published[stream.id] { return LevelMeter(publishingTo: entry.level) }
            let meter = LevelMeter()
            published[stream.id] = (stream, meter.published)
            return meter
        }
    }

    /// Forgets the stream with id `id` (no longer recorded).
    func remove(_ id: UInt32) {
        _ = published.withLock { $0.removeValue(forKey: id) }
    }

    /// Forgets every stream (the capture stopped).
    func removeAll() {
        published.withLock { $0.removeAll() }
    }

    /// Each recorded stream's level, by stream id.
    var levels: [AppLevel] {
        published.withLock { published in
            published.values.map {
                AppLevel(
                    stream: $0.stream, peakDBFS: LevelMeter.dBFS($0.level.peak), rmsDBFS: LevelMeter.dBFS($0.level.rms))
            }
        }.sorted { $0.stream.id < $1.stream.id }
    }
}
