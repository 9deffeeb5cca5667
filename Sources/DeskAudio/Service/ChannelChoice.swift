/// The channels a capture asks for: a layout of its own choosing, or the one that fits the
/// default sink, read when capture starts.
public enum ChannelChoice: Equatable, Sendable {
    /// Exactly this layout; the server up- or downmixes what it has to it.
    case layout(ChannelLayout)
    /// The default sink's own channel count, read from the server as capture starts.
    case sinkLayout

    /// The layout that carries a sink of `channels` channels without losing a channel: 1 is
    /// mono, 2 (or an unknown count, 0) stereo, 3 to 6 (2.1, 4.0, 5.0, 5.1) 5.1, and more 7.1.
    public static func layout(forSinkChannels channels: Int) -> ChannelLayout {
        switch channels {
        case 1: .mono
        case 3...6: .surround51
        case 7...: .surround71
        default: .stereo
        }
    }
}
