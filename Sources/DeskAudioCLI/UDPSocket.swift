import Glibc

/// A UDP socket for `send` and `receive`: one AudioFrame per datagram, to one peer or from
/// any. IPv4 and IPv6.
final class UDPSocket: Sendable {  // (one descriptor; send and recv are thread-safe)
    private let descriptor: Int32

    private init(descriptor: Int32) { self.descriptor = descriptor }

    deinit { close(descriptor) }

    /// A socket whose datagrams go to `address` ("HOST:PORT", "[V6]:PORT").
    static func sending(to address: String) throws -> UDPSocket {
        let (host, port) = try split(address)
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let result = getaddrinfo(host, port, &hints, &found)
        guard result == 0, let first = found else {
            throw CLIFailure("cannot resolve \(address): \(String(cString: gai_strerror(result)))")
        }
        defer { freeaddrinfo(found) }
        var lastError = "no address"
        for entry in sequence(first: first, next: { $0.pointee.ai_next }) {
            let descriptor = socket(entry.pointee.ai_family, entry.pointee.ai_socktype, entry.pointee.ai_protocol)
            guard descriptor >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            if connect(descriptor, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 {
                return UDPSocket(descriptor: descriptor)
            }
            lastError = String(cString: strerror(errno))
            close(descriptor)
        }
        throw CLIFailure("cannot send to \(address): \(lastError)")
    }

    /// A socket receiving on `port` of every address (IPv6 and IPv4), whose `receive` waits
    /// at most `timeoutMs`.
    static func listening(on port: UInt16, timeoutMs: Int) throws -> UDPSocket {
        let descriptor = socket(AF_INET6, Int32(SOCK_DGRAM.rawValue), 0)
        guard descriptor >= 0 else { throw CLIFailure("cannot open a UDP socket: \(String(cString: strerror(errno)))") }
        let udp = UDPSocket(descriptor: descriptor)
        var off: Int32 = 0
        setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: timeoutMs / 1000, tv_usec: (timeoutMs % 1000) * 1000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        address.sin6_addr = in6addr_any
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
        guard bound == 0 else { throw CLIFailure("cannot listen on UDP port \(port): \(String(cString: strerror(errno)))") }
        return udp
    }

    /// Sends one datagram; false when the system refused it (the peer's port closed, a full
    /// queue): the frame is lost, as on a network.
    @discardableResult
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool {
        Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
    }

    /// Waits for one datagram and copies it into `buffer`; its length, or nil when none came
    /// within the timeout (or a signal came).
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
        return count >= 0 ? count : nil
    }

    /// "HOST:PORT" or "[HOST]:PORT" split in two.
    static func split(_ address: String) throws -> (host: String, port: String) {
        guard let colon = address.lastIndex(of: ":"), colon != address.startIndex,
            let port = UInt16(address[address.index(after: colon)...]), port > 0
        else { throw CLIFailure("\(address) is not HOST:PORT (a port from 1 to 65535)") }
        var host = address[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (String(host), String(port))
    }
}
