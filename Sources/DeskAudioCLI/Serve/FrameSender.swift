import NIOCore
import NIOWebSocket
import Synchronization

/// One browser's share of the frames, on the server's event loop: each frame is written as
/// one WebSocket binary message straight from the client's handler context (no lookup, no
/// lock per frame; a batch's frames flushed at once), or dropped and counted when the client
/// cannot take it: its socket is full (write buffer above the high-water mark) or, for a
/// client that acknowledges what it received (`received SEQUENCE`), more than
/// `inFlightLimit` frames are unacknowledged (a stalled browser whose kernel buffers would
/// otherwise swallow seconds of frames). Sequence numbers, not counts: a frame lost on the
/// way does not count against the client.
/// Used on the event loop only; its `counts` may be read anywhere.
final class FrameSender {
    /// What a client has been sent and what it has had dropped, readable from any thread.
    final class Counts: Sendable {
        /// Frames written to the client's socket.
        let sent = Atomic<UInt64>(0)
        /// Frames the client could not take.
        let dropped = Atomic<UInt64>(0)
    }

    /// One AudioFrame, and its sequence number.
    struct Frame: Sendable {
        let buffer: ByteBuffer
        let sequence: UInt32
    }

    /// Unacknowledged frames a client may have: 0.6 s of 10 ms frames.
    static let inFlightLimit: UInt32 = 60

    let counts = Counts()
    private let context: ChannelHandlerContext
    // The sequence number of the last frame written, and of the newest frame the client says
    // it has, if it says so.
    private var lastSent: UInt32?
    private var acknowledged: UInt32?

    /// Sends through `context`, the client's WebSocket handler's.
    init(context: ChannelHandlerContext) {
        self.context = context
    }

    /// Records that the client has received the frame with this sequence number.
    func acknowledge(_ sequence: UInt32) {
        acknowledged = sequence
    }

    /// Writes each of `frames` the client can take, and flushes them in one go.
    func send(_ frames: [Frame]) {
        var written = 0
        for frame in frames {
            var inFlight: UInt32 = 0
            if let acknowledged, let lastSent { inFlight = lastSent &- acknowledged }
            guard inFlight <= Self.inFlightLimit && context.channel.isWritable else {
                counts.dropped.add(1, ordering: .relaxed)
                continue
            }
            context.write(NIOAny(WebSocketFrame(fin: true, opcode: .binary, data: frame.buffer)), promise: nil)
            written += 1
            lastSent = frame.sequence
        }
        guard written > 0 else { return }
        context.flush()
        counts.sent.add(UInt64(written), ordering: .relaxed)
    }
}
