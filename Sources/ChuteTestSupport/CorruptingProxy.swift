import Foundation
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A TCP forwarder that flips one byte in flight: a broken link or a faulty middlebox between two agents. It listens on
/// `host` (a port the kernel picks) and forwards each connection to `target`; over its whole life it flips (XOR 0xFF)
/// the byte at `offset` of the first response body that reaches it, and of the first request body, each counted from
/// the end of the first message's headers (`\r\n\r\n`) of a connection, so that the headers and their framing stay
/// intact and only the content changes.
///
/// A thread accepts, and two threads per connection copy each direction; ``stop()`` closes everything. The
/// corresponding C functions are `socket`, `bind`, `listen`, `getsockname`, `accept`, `connect`, `read`, `write` and
/// `shutdown`.
package final class CorruptingProxy: Sendable {
    /// The direction of the bytes of a connection.
    private enum Direction {
        case request
        case response
    }

    package let port: Int
    private let listener: Int32
    private let target: (host: String, port: Int)
    private let offset: Int
    private let corrupts: (requests: Bool, responses: Bool)
    private let flips = Mutex<(requests: Int, responses: Int)>((0, 0))
    private let open = Mutex<Set<Int32>>([])
    private let accepted = Mutex(0)
    private let stopping = Mutex(false)

    /// - Throws: the `Errno` of the failing call.
    package init(
        host: String,
        target: (host: String, port: Int),
        corruptRequests: Bool,
        corruptResponses: Bool,
        offset: Int = 10_000
    ) throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Errno(rawValue: errno) }
        var reuse: Int32 = 1
        setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && listen(socket, 64) == 0
                    && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else {
            let error = Errno(rawValue: errno)
            close(socket)
            throw error
        }
        self.listener = socket
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.target = target
        self.offset = offset
        self.corrupts = (corruptRequests, corruptResponses)
        let thread = Thread { [self] in self.acceptUntilStopped() }
        thread.name = "chute-test-corrupting-proxy"
        thread.start()
    }

    /// How many request bodies and response bodies it changed (0 or 1 each).
    package var flipped: (requests: Int, responses: Int) { self.flips.withLock { $0 } }

    /// How many connections it forwarded.
    package var connections: Int { self.accepted.withLock { $0 } }

    /// Stops accepting and closes every connection.
    package func stop() {
        let first = self.stopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        shutdown(self.listener, Int32(SHUT_RDWR))
        for descriptor in self.open.withLock({ $0 }) { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    deinit { self.stop() }

    private func acceptUntilStopped() {
        defer { close(self.listener) }
        while true {
            let client = accept(self.listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard !self.stopping.withLock({ $0 }), let server = self.connectToTarget() else {
                close(client)
                continue
            }
            self.accepted.withLock { $0 += 1 }
            self.open.withLock { $0.formUnion([client, server]) }
            // Both directions copied, both sockets are closed.
            let copies = DispatchGroup()
            for (from, to, direction) in [(client, server, Direction.request), (server, client, .response)] {
                copies.enter()
                let thread = Thread { [self] in
                    self.copy(from: from, to: to, direction)
                    copies.leave()
                }
                thread.name = "chute-test-corrupting-proxy-\(direction)"
                thread.start()
            }
            copies.notify(queue: .global()) { [self] in
                self.open.withLock { $0.subtract([client, server]) }
                close(client)
                close(server)
            }
        }
    }

    private func connectToTarget() -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(self.target.host)
        address.sin_port = UInt16(self.target.port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(socket)
            return nil
        }
        return socket
    }

    /// Copies one direction until its end, flipping the chosen byte of its body once if this direction is to be
    /// corrupted and none of its kind was yet; then ends the other side's writing.
    private func copy(from source: Int32, to destination: Int32, _ direction: Direction) {
        defer { shutdown(destination, Int32(SHUT_WR)) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // The first message's headers as they come, until their end; then the body's bytes so far.
        var headers: [UInt8] = []
        var body: Int?
        let corrupts = direction == .request ? self.corrupts.requests : self.corrupts.responses
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            var start = 0
            if body == nil {
                headers += buffer[0..<count]
                if let end = Self.endOfHeaders(headers) {
                    start = count - (headers.count - end)
                    body = 0
                } else {
                    start = count
                }
            }
            if corrupts, let seen = body, seen <= self.offset, seen + (count - start) > self.offset,
                self.claimFlip(direction)
            {
                buffer[start + self.offset - seen] ^= 0xFF
            }
            if let seen = body { body = seen + (count - start) }
            var written = 0
            while written < count {
                let wrote = buffer.withUnsafeBytes { write(destination, $0.baseAddress! + written, count - written) }
                if wrote < 0, errno == EINTR { continue }
                guard wrote > 0 else { return }
                written += wrote
            }
        }
    }

    /// The index just past the first `\r\n\r\n` in `bytes`, or `nil`.
    private static func endOfHeaders(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 3..<bytes.count
        where bytes[index - 3] == 13 && bytes[index - 2] == 10 && bytes[index - 1] == 13 && bytes[index] == 10 {
            return index + 1
        }
        return nil
    }

    /// Takes this direction's one flip: `true` only the first time.
    private func claimFlip(_ direction: Direction) -> Bool {
        self.flips.withLock { flips in
            switch direction {
            case .request:
                guard flips.requests == 0 else { return false }
                flips.requests = 1
            case .response:
                guard flips.responses == 0 else { return false }
                flips.responses = 1
            }
            return true
        }
    }
}
