import DeskAudio
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// `serve`'s HTTP and WebSocket server on one port, on one event-loop thread: the player's
/// files over HTTP (`WebPageHandler`), the frames over a WebSocket on /frames
/// (`FrameSocketHandler`, `WebClients`).
final class WebServer {
    /// Who is connected, and what each has had.
    let clients: WebClients
    /// The address it listens on.
    let address: SocketAddress
    private let group: MultiThreadedEventLoopGroup
    private let channel: Channel

    /// Largest message a browser may send (its stats reports, its microphone's AudioFrames of
    /// at most 1 311 bytes): 4 KiB. Larger: closed, 1009.
    static let maxMessageBytes = 4096
    // A client's socket stops taking frames past this much unsent data: about 60 frames.
    private static let writeBuffer = ChannelOptions.Types.WriteBufferWaterMark(low: 4096, high: 8192)

    /// Listens on `host`:`port` (port 0: any free one); sends `framesPerSend` frames of
    /// `frameDuration` at a time.
    init(
        host: String, port: Int, assets: WebAssets, maxClients: Int, framesPerSend: Int, frameDuration: FrameDuration,
        microphone: BrowserMicrophone?
    ) throws(CLIFailure) {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let clients = WebClients(
            limit: maxClients, eventLoop: group.next(), framesPerSend: framesPerSend, frameDuration: frameDuration,
            microphone: microphone)
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: Self.maxMessageBytes,
            shouldUpgrade: { channel, head in
                let accepted = head.uri.hasPrefix(WebPageHandler.framesPath) && clients.hasRoom
                return channel.eventLoop.makeSucceededFuture(accepted ? HTTPHeaders() : nil)
            },
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FrameSocketHandler(clients: clients))
                }
            })
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.writeBufferWaterMark, value: Self.writeBuffer)
            // A small kernel send buffer too, or a stalled browser would swallow seconds of frames.
            .childChannelOption(.socketOption(.so_sndbuf), value: 16384)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let page = WebPageHandler(assets: assets, clients: clients)
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (
                            upgraders: [upgrader],
                            completionHandler: { context in
                                context.pipeline.removeHandler(name: "page", promise: nil)
                            }
                        ),
                        withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(page, name: "page")
                }
            }
        do {
            channel = try bootstrap.bind(host: host, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw CLIFailure("cannot listen on \(host):\(port): \(error)")
        }
        guard let address = channel.localAddress else {
            try? group.syncShutdownGracefully()
            throw CLIFailure("cannot listen on \(host):\(port): no local address")
        }
        self.group = group
        self.clients = clients
        self.address = address
    }

    /// Closes every connection and the listening socket.
    func stop() {
        try? channel.close().wait()
        for client in clients.connected { try? client.channel.close().wait() }
        try? group.syncShutdownGracefully()
        clients.microphone?.stop()
    }
}
