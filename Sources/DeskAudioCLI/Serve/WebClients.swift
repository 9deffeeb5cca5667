import DeskAudio
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket

/// The browsers connected to `serve`, and the frames sent to each. Frames come from the
/// library's delivery thread and are written on the server's event loop. A client that
/// cannot keep up has frames dropped and counted, so it never holds up the others or the
/// capture: when its socket cannot take more (write buffer above the high-water mark), or,
/// for a client that acknowledges what it received (`received SEQUENCE`: the newest frame's
/// sequence number, as the demo page sends 4 times a second), when the frames sent since are
/// more than `inFlightLimit` (a stalled browser whose kernel buffers would otherwise swallow
/// seconds of frames). Sequence numbers, not counts: a frame lost on the way does not count
/// against the client.
final class WebClients: Sendable {
    /// What one client has had, for the status lines and the summary.
    struct Client: Sendable {
        let id: Int
        let address: String
        let channel: Channel
        var framesSent: UInt64 = 0
        var framesDropped: UInt64 = 0
        /// The last stats line the client's player reported (the demo page sends one a second).
        var report: String?
        /// The sequence number of the last frame written to the client.
        var lastSent: UInt32?
        /// The newest frame the client says it has received (`received SEQUENCE`), if it says so.
        var acknowledged: UInt32?
    }

    /// Most clients at once; more are refused (503).
    let limit: Int
    private let eventLoop: EventLoop
    private let state = NIOLockedValueBox(State())
    // Frames handed to the event loop and not written yet: past `queueLimit` (the loop is
    // stuck), frames are dropped for everybody and counted here.
    private let queued = NIOLockedValueBox(0)
    private static let queueLimit = 100
    /// Unacknowledged frames a client may have: 0.6 s of 10 ms frames.
    static let inFlightLimit: UInt32 = 60

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var framesDroppedForAll: UInt64 = 0
        var everConnected: [Client] = []
    }

    init(limit: Int, eventLoop: EventLoop) {
        self.limit = limit
        self.eventLoop = eventLoop
    }

    /// True while another client may connect.
    var hasRoom: Bool { state.withLockedValue { $0.clients.count < limit } }

    /// Clients connected now, by id.
    var connected: [Client] { state.withLockedValue { $0.clients.values.sorted { $0.id < $1.id } } }

    /// Every client there has been, as it was when it left (or is now).
    var all: [Client] {
        state.withLockedValue { state in
            (state.everConnected + state.clients.values).sorted { $0.id < $1.id }
        }
    }

    /// Frames dropped for every client because the server's own loop fell behind.
    var framesDroppedForAll: UInt64 { state.withLockedValue { $0.framesDroppedForAll } }

    /// Adds a client whose WebSocket is open; its id. It is removed when its channel closes,
    /// however that comes about.
    func add(_ channel: Channel) -> Int {
        let address = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        let id = state.withLockedValue { state in
            let id = state.nextID
            state.nextID += 1
            state.clients[id] = Client(id: id, address: address, channel: channel)
            return id
        }
        channel.closeFuture.whenComplete { [weak self] _ in self?.remove(id) }
        return id
    }

    /// Removes a client that closed or failed.
    func remove(_ id: Int) {
        state.withLockedValue { state in
            if let client = state.clients.removeValue(forKey: id) { state.everConnected.append(client) }
        }
    }

    /// Keeps the client's latest stats report (at most 1 KiB, printable ASCII only).
    func report(_ text: String, from id: Int) {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.prefix(1024).filter { $0.isASCII && $0.value >= 32 }))
        state.withLockedValue { $0.clients[id]?.report = clean }
    }

    /// Records that client `id` has received the frame with this sequence number.
    func acknowledge(_ sequence: UInt32, from id: Int) {
        state.withLockedValue { $0.clients[id]?.acknowledged = sequence }
    }

    /// Sends one AudioFrame to every client (called on the library's delivery thread).
    func broadcast(_ frame: UnsafeRawBufferPointer) {
        let accepted = queued.withLockedValue { count in
            guard count < Self.queueLimit else { return false }
            count += 1
            return true
        }
        guard accepted else {
            state.withLockedValue { $0.framesDroppedForAll += 1 }
            return
        }
        let buffer = ByteBuffer(bytes: frame)
        let sequence = (try? AudioFrameParser.parse(frame))?.header.sequence ?? 0
        eventLoop.execute {
            self.queued.withLockedValue { $0 -= 1 }
            self.write(buffer, sequence: sequence)
        }
    }

    // On the event loop: one WebSocket binary message per frame to each client that can take it.
    private func write(_ buffer: ByteBuffer, sequence: UInt32) {
        let channels = state.withLockedValue { state in
            state.clients.values.map { client in
                var inFlight: UInt32 = 0
                if let acknowledged = client.acknowledged, let lastSent = client.lastSent { inFlight = lastSent &- acknowledged }
                return (client.id, client.channel, inFlight <= Self.inFlightLimit)
            }
        }
        let outcomes = channels.map { id, channel, keepingUp in
            let writable = keepingUp && channel.isWritable
            if writable {
                channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .binary, data: buffer), promise: nil)
            }
            return (id, writable)
        }
        state.withLockedValue { state in
            for (id, written) in outcomes {
                if written {
                    state.clients[id]?.framesSent += 1
                    state.clients[id]?.lastSent = sequence
                } else {
                    state.clients[id]?.framesDropped += 1
                }
            }
        }
    }
}
