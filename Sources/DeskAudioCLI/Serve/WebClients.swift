import DeskAudio
import NIOConcurrencyHelpers
import NIOCore
import Synchronization

/// The browsers connected to `serve`, and the frames sent to each. Frames come from the
/// library's delivery thread and are written on the server's event loop, each client's by
/// its `FrameSender` (which drops and counts what a client cannot take, so a slow client
/// never holds up the others or the capture). They go out `framesPerSend` at a time: one
/// wake-up of the loop and one socket write per client for each batch.
final class WebClients: Sendable {
    /// What one client has had, for the status lines and the summary.
    struct Client: Sendable {
        let id: Int
        let address: String
        let channel: Channel
        let counts: FrameSender.Counts
        /// What became of the microphone frames it sent (`serve --remote-mic`).
        let microphoneCounts = BrowserMicrophone.Counts()
        /// The last stats line the client's player reported (the demo page sends one a second).
        var report: String?
        /// Frames written to the client.
        var framesSent: UInt64 { counts.sent.load(ordering: .relaxed) }
        /// Frames the client could not take.
        var framesDropped: UInt64 { counts.dropped.load(ordering: .relaxed) }
    }

    /// Most clients at once; more are refused (503).
    let limit: Int
    /// The remote microphone browsers send to, if `serve` has one.
    let microphone: BrowserMicrophone?
    /// Frames written to a client at once: 1 sends each frame as soon as it is encoded; each
    /// one more holds a batch's first frame back a frame's length longer and saves a wake-up
    /// and a socket write per batch.
    let framesPerSend: Int
    private let eventLoop: EventLoop
    private let state = NIOLockedValueBox(State())
    // The clients' senders, in the order they came: touched on the event loop only.
    private let senders: NIOLoopBoundBox<[(id: Int, sender: FrameSender)]>
    private let pending = NIOLockedValueBox(Pending())
    private let droppedForAll = Atomic<UInt64>(0)
    private static let queueLimit = 100
    // A batch the capture left short (it went quiet, the gate closed, the delivery thread was
    // held up) is sent this long after the last batch or its own first frame, on the event
    // loop: a batch's length and half a frame.
    private let shortBatchWait: TimeAmount
    private let shortBatchFlush: NIOLoopBoundBox<Scheduled<Void>?>

    // Frames from the delivery thread the event loop has not taken yet: past `queueLimit`
    // (the loop is stuck), frames are dropped for everybody and counted.
    private struct Pending {
        var frames: [FrameSender.Frame] = []
        // A short-batch flush is scheduled on the loop, or about to be: when it is not, the
        // next frame has one scheduled (with frames sent one at a time, never).
        var flushArmed = false
    }

    private struct State {
        var clients: [Int: Client] = [:]
        var nextID = 1
        var everConnected: [Client] = []
    }

    /// Serves at most `limit` clients on `eventLoop`, `framesPerSend` frames of
    /// `frameDuration` at a time.
    init(
        limit: Int, eventLoop: EventLoop, framesPerSend: Int, frameDuration: FrameDuration, microphone: BrowserMicrophone?
    ) {
        self.limit = limit
        self.microphone = microphone
        self.framesPerSend = framesPerSend
        self.eventLoop = eventLoop
        senders = .makeBoxSendingValue([], eventLoop: eventLoop)
        shortBatchWait = .microseconds(Int64(frameDuration.microseconds * (2 * framesPerSend + 1) / 2))
        shortBatchFlush = .makeBoxSendingValue(nil, eventLoop: eventLoop)
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
        microphone?.leave(id)
        state.withLockedValue { state in
            if let client = state.clients.removeValue(forKey: id) { state.everConnected.append(client) }
        }
    }

    /// One binary message from client `id`: a frame for the microphone (on the event loop).
    func microphoneFrame(_ bytes: UnsafeRawBufferPointer, from id: Int) {
        guard let microphone, let counts = state.withLockedValue({ $0.clients[id]?.microphoneCounts }) else { return }
        microphone.take(bytes, from: id, counts: counts)
    }

    /// Keeps the client's latest stats report (at most 1 KiB, printable ASCII only).
    func report(_ text: String, from id: Int) {
        let clean = String(String.UnicodeScalarView(text.unicodeScalars.prefix(1024).filter { $0.isASCII && $0.value >= 32 }))
        state.withLockedValue { $0.clients[id]?.report = clean }
    }

    /// Sends one AudioFrame to every client (called on the library's delivery thread): wakes
    /// the event loop when it completes a batch, or when it starts one and no flush of a short
    /// batch is scheduled; frames that come while the loop has not taken a batch yet go with it.
    func broadcast(_ frame: UnsafeRawBufferPointer) {
        let sequence = UInt32(
            littleEndian: frame.loadUnaligned(fromByteOffset: AudioFrameHeader.Offset.sequence, as: UInt32.self))
        let next = FrameSender.Frame(buffer: ByteBuffer(bytes: frame), sequence: sequence)
        let perSend = framesPerSend
        let loopWork = pending.withLockedValue { pending -> LoopWork in
            guard pending.frames.count < Self.queueLimit else { return .dropped }
            pending.frames.append(next)
            if pending.frames.count == perSend { return .sendBatch }
            guard perSend > 1 && !pending.flushArmed else { return .none }
            pending.flushArmed = true
            return .scheduleFlush
        }
        switch loopWork {
        case .none: break
        case .sendBatch: eventLoop.execute { self.sendPending() }
        case .scheduleFlush: eventLoop.execute { self.scheduleShortBatchFlush() }
        case .dropped: droppedForAll.add(1, ordering: .relaxed)
        }
    }

    // What a new frame asks of the event loop.
    private enum LoopWork { case none, sendBatch, scheduleFlush, dropped }

    // On the event loop: every client gets the frames waiting, in one write; a batch left
    // short later is sent when `shortBatchWait` has passed with no batch after this one.
    private func sendPending() {
        let perSend = framesPerSend
        let frames = pending.withLockedValue { pending in
            defer { pending.frames.removeAll(keepingCapacity: true) }
            pending.flushArmed = perSend > 1 && !pending.frames.isEmpty
            return pending.frames
        }
        shortBatchFlush.value?.cancel()
        shortBatchFlush.value = nil
        guard !frames.isEmpty else { return }
        for (_, sender) in senders.value { sender.send(frames) }
        if perSend > 1 { scheduleShortBatchFlush() }
    }

    // On the event loop.
    private func scheduleShortBatchFlush() {
        guard shortBatchFlush.value == nil else { return }
        shortBatchFlush.value = eventLoop.scheduleTask(in: shortBatchWait) { self.sendPending() }
    }
}
