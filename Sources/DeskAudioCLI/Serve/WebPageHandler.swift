import NIOCore
import NIOHTTP1

/// Answers the plain HTTP requests of `serve`: the player's files with GET or HEAD, a clear
/// status for everything else (404 unknown path, 405 other methods, 426 for /frames without a
/// WebSocket upgrade, 503 when the client limit is reached). Request bodies are read and
/// thrown away, never kept.
final class WebPageHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The path the frames' WebSocket is served on.
    static let framesPath = "/frames"

    private let assets: WebAssets
    private let clients: WebClients
    private var request: HTTPRequestHead?

    init(assets: WebAssets, clients: WebClients) {
        self.assets = assets
        self.clients = clients
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): request = head
        case .body: break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.prefix { $0 != "?" && $0 != "#" })
        guard head.method == .GET || head.method == .HEAD else {
            return send(.methodNotAllowed, "only GET and HEAD\n", extra: [("Allow", "GET, HEAD")], head: head, context: context)
        }
        if path == Self.framesPath {
            if !clients.hasRoom {
                return send(.serviceUnavailable, "\(clients.limit) clients are connected already\n", head: head, context: context)
            }
            return send(
                .upgradeRequired, "the frames come over a WebSocket: open ws://HOST\(Self.framesPath)\n",
                extra: [("Upgrade", "websocket")], head: head, context: context)
        }
        guard let asset = assets.files[path] else {
            return send(.notFound, "not found: \(path.prefix(200))\n", head: head, context: context)
        }
        send(.ok, asset.body, contentType: asset.contentType, head: head, context: context)
    }

    private func send(
        _ status: HTTPResponseStatus, _ text: String, extra: [(String, String)] = [], head: HTTPRequestHead,
        context: ChannelHandlerContext
    ) {
        send(status, ByteBuffer(string: text), contentType: "text/plain; charset=utf-8", extra: extra, head: head, context: context)
    }

    private func send(
        _ status: HTTPResponseStatus, _ body: ByteBuffer, contentType: String, extra: [(String, String)] = [],
        head: HTTPRequestHead, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.readableBytes))
        headers.add(name: "Cache-Control", value: "no-cache")
        for (name, value) in extra { headers.add(name: name, value: value) }
        let keepAlive = head.isKeepAlive && status == .ok
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        if head.method != .HEAD { context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil) }
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
