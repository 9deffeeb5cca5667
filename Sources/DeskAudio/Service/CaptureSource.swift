/// One source a capture records: what it is, the device it records (nil: the default, followed
/// when it changes), the slot whose feed its stream writes, the stream while it runs, and
/// when to try reopening a stream the server dropped. The service holds its sources in a
/// list and touches them only with its control lock held.
final class CaptureSource {
    /// What a source records.
    enum Role {
        /// What the machine plays: a sink's monitor.
        case app
        /// A microphone: a source that is not a monitor.
        case mic

        /// The source in messages.
        var name: String { SourceFeed.name(of: frameFlags) }
        /// The flag on frames holding its audio.
        var frameFlags: AudioFrameHeader.Flags { self == .app ? .app : .mic }
    }

    /// What it records.
    let role: Role
    /// The slot its feed is in.
    let slot: Int
    /// Where its stream writes.
    let feed: SourceFeed
    /// The device asked for by name; nil follows the default.
    var device: String?
    /// For app audio: the applications recorded instead of a sink's monitor (nil: the monitor).
    var selection: AppSelection?
    /// The stream, while one is open (possibly failed, waiting to be reopened).
    var stream: CaptureStream?
    /// When to try reopening a failed stream.
    var retry = RetryBackoff()
    /// Whether the stream still gets audio.
    var stall = StallWatch()
    /// True when the stream stalled and is to be reopened (as a failed one is).
    var needsReopen = false
    /// The feed's skipped samples already told in the log.
    var skipsLogged: UInt64 = 0

    /// A source of `role` on `device` (nil: the default) or, for app audio, recording
    /// `selection` (nil: a sink's monitor), writing to the feed in `slot`.
    init(role: Role, device: String?, selection: AppSelection?, slot: Int, feed: SourceFeed) {
        self.role = role
        self.device = device
        self.selection = selection
        self.slot = slot
        self.feed = feed
    }

    /// What its stream records.
    var target: CaptureTarget {
        switch role {
        case .app:
            if let selection { .applications(selection) } else { device.map { .sinkMonitor(named: $0) } ?? .defaultSinkMonitor }
        case .mic: device.map { .source(named: $0) } ?? .defaultSource
        }
    }
}
