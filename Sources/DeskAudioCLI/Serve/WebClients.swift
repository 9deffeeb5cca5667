import DeskAudio
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// The browsers connected to `serve`, and the frames sent to each. Frames come from the
/// library's delivery thread and are written on the server's event loop, each client's by
/// its `FrameSender` (which drops and counts what a client cannot take, so a slow client
/// never holds up the others or the capture).
final class WebClients: Sendable {
    /// What one client has had, for the status lines and the summary.
    struct Client: Sendable {
        let id: Int
        let address: String
        let channel: Channel
        let counts: FrameSender.Counts
        /// The last stats line the client's player reported (the demo page sends one a second).
        var report: String?
        /// Frames written to the client.
        var framesSent: UInt64 { counts.sent.load(ordering: .relaxed) }
        /// Frames the client could not take.
        var framesDropped: UInt64 { counts.dropped.load(ordering: .relaxed) }
    }

    /// Most clients at once; more are refused (503).
    let limit: Int
    private let eventLoop: EventLoop
    private let state = NIOLockedValueBox(State())
    // The clients' senders, in the order they came: touched on the event loop only.
    private let senders: NIOLoopBoundBox<[(id: Int, sender: FrameSender)]>
    // Frames handed to the event loop and not written yet: past `queueLimit` (the loop is
    // stuck), frames are dropped for everybody and counted.
    private let queued = Atomic<Int>(0)
    private let droppedForAll = Atomic<UInt64>(0)
    private static let queueLimit = 100

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var everConnected: [Client] = []
    }

    init(limit: Int, eventLoop: EventLoop) {
        self.limit = limit
        self.eventLoop = eventLoop
        senders = .makeBoxSendingValue([], eventLoop: eventLoop)
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
    var framesDroppedForAll: UInt64 { droppedForAll.load(ordering: .relaxed) }

    /// Adds a client whose WebSocket is open, sent to by `sender` (on the event loop); its id.
    /// It is removed when its channel closes, however that comes about.
    func add(_ channel: Channel, sender: FrameSender) -> Int {
        let address = channel.remoteAddress.map { "\($0.ipAddress ?? "?"):\($0.port ?? 0)" } ?? "?"
        let id = state.withLockedValue { state in
            let id = state.nextID
            state.nextID += 1
            state.clients[id] = Client(id: id, address: address, channel: channel, counts: sender.counts)
            return id
        }
        senders.value.append((id, sender))
        channel.closeFuture.whenComplete { [weak self] _ in self?.remove(id) }
        return id
    }

    // On the event loop: a client that closed or failed.
    private func remove(_ id: Int) {
        senders.value.removeAll { $0.id == id }
        state.withLockedValue { state in
            if let client = state.clients.removeValue(forKey: id) { state.everConnected.append(client) }
        }
    }

    /// Keeps the client's latest stats report (at most 1 KiB, printable ASCII only).
    func report(_ text: String, from id: Int) {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.prefix(1024).filter { $0.isASCII && $0.value >= 32 }))
        state.withLockedValue { $0.clients[id]?.report = clean }
    }

    /// Sends one AudioFrame to every client (called on the library's delivery thread).
    func broadcast(_ frame: UnsafeRawBufferPointer) {
        guard queued.add(1, ordering: .relaxed).newValue <= Self.queueLimit else {
            queued.subtract(1, ordering: .relaxed)
            droppedForAll.add(1, ordering: .relaxed)
            return
        }
        let buffer = ByteBuffer(bytes: frame)
        let sequence = UInt32(
            littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.sequence, as: UInt32.self))
        eventLoop.execute {
            self.queued.subtract(1, ordering: .relaxed)
            for (_, sender) in self.senders.value { sender.send(buffer, sequence: sequence) }
        }
    }
}
