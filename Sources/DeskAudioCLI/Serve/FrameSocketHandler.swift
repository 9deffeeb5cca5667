import NIOCore
import NIOWebSocket

/// One browser's WebSocket on /frames: registers it with `WebClients`, which writes the
/// frames through its `FrameSender`; takes the text messages a player may send (`received
/// SEQUENCE`: the newest frame it has, for flow control; `microphone off`: it stopped
/// sending its microphone; anything else: its stats, kept and shown), answers pings and
/// closes. With a remote microphone (`serve --remote-mic`) it first tells the page so
/// (`{"type":"server","microphone":NAME}`), and binary messages are the browser's
/// microphone frames, each played or refused and counted by `BrowserMicrophone`; without
/// one, a binary message closes the socket with 1003 (unacceptable data). Messages over the
/// upgrader's size limit are closed by NIO with 1009.
final class FrameSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let clients: WebClients
    private var id: Int?
    private var sender: FrameSender?
    private var closing = false

    init(clients: WebClients) {
        self.clients = clients
    }

    // (`WebClients` removes the client when its channel closes.)
    func handlerAdded(context: ChannelHandlerContext) {
        let sender = FrameSender(context: context)
        self.sender = sender
        id = clients.add(context.channel, sender: sender)
        if let microphone = clients.microphone {
            let hello = #"{"type":"server","microphone":"\#(microphone.name)"}"#
            let text = WebSocketFrame(fin: true, opcode: .text, data: context.channel.allocator.buffer(string: hello))
            context.writeAndFlush(wrapOutboundOut(text), promise: nil)
        }
    }

    // The sender holds the context, which holds this handler: let go of it.
    func handlerRemoved(context: ChannelHandlerContext) {
        sender = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text:
            var data = frame.unmaskedData
            if frame.fin, let id, let text = data.readString(length: data.readableBytes) {
                if text.hasPrefix("received "), let sequence = UInt32(text.dropFirst(9)) {
                    sender?.acknowledge(sequence)
                } else if text == "microphone off" {
                    clients.microphone?.leave(id)
                } else {
                    clients.report(text, from: id)
                }
            }
        case .ping:
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            var data = frame.unmaskedData
            let code = data.readSlice(length: 2) ?? ByteBuffer()
            close(context: context, data: code)
        case .binary where clients.microphone != nil:
            guard frame.fin, let id else { return }  // (a fragmented message is no AudioFrame: dropped)
            frame.unmaskedData.withUnsafeReadableBytes { clients.microphoneFrame($0, from: id) }
        case .binary:
            var reason = ByteBuffer()
            reason.write(webSocketErrorCode: .unacceptableData)
            close(context: context, data: reason)
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    private func close(context: ChannelHandlerContext, data: ByteBuffer) {
        guard !closing else { return }
        closing = true
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: data)))
            .whenComplete { _ in channel.close(promise: nil) }
    }
}
