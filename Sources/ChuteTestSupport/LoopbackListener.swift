import ChuteCore
import Foundation
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// A TCP listener on 127.0.0.1 that counts every connection made to it: the canary of the hostile-input tests,
/// whose payloads point at it and which must see none; and, answering HTTP, the receiver of the notification tests.
///
/// A thread of its own waits in `poll` on the listening socket and on a pipe that ``stop()`` writes to; each
/// connection is accepted, its first bytes (the request line, if the client sent one quickly) are kept for the
/// failure message, and it is closed. With ``Answer/http(_:)`` or ``Answer/silence`` the whole HTTP request (up to
/// 1 MiB, each read waiting at most 2 s) is read and kept in ``httpRequests`` first.
///
/// The corresponding C functions are `socket`, `bind`, `listen`, `getsockname`, `pipe`, `poll` and `accept`.
package final class LoopbackListener: Sendable {
    /// What the listener does with a connection.
    package enum Answer: Sendable {
        /// Close it at once.
        case close
        /// Read the HTTP request, answer with these statuses in turn (the last one for every later request), close.
        case http([Int])
        /// Read the HTTP request and never answer; the connection stays open until ``stop()``.
        case silence
    }

    /// One HTTP request the listener read.
    package struct HTTPRequest: Sendable {
        /// `POST /hook HTTP/1.1`.
        package var requestLine: String
        /// The headers, by lowercased name.
        package var headers: [String: String]
        package var body: Data
        /// The status it was answered with, `nil` for none.
        package var status: Int?

        /// The path of the request line.
        package var path: String {
            let parts = self.requestLine.split(separator: " ")
            return parts.count > 1 ? String(parts[1]) : ""
        }
    }

    /// The port the kernel picked.
    package let port: Int
    private let answer: Answer
    /// The HTTP requests read so far.
    private let received = Mutex<[HTTPRequest]>([])
    /// Connections held open by ``Answer/silence``, closed by ``stop()``.
    private let held = Mutex<[Int32]>([])
    private let socket: Int32
    /// Written by ``stop()`` to wake the thread.
    private let wake: (read: Int32, write: Int32)
    /// What each connection sent first (possibly nothing).
    private let accepted = Mutex<[String]>([])
    /// How many of the first connections were ``checkThatItCounts()``'s.
    private let ignored = Mutex(0)
    private let stopped = DispatchSemaphore(value: 0)
    private let isStopping = Mutex(false)

    /// Binds a fresh port on 127.0.0.1 and starts accepting.
    ///
    /// - Throws: the `Errno` of the failing call.
    package init(answer: Answer = .close) throws {
        self.answer = answer
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw Errno(rawValue: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && listen(socket, 64) == 0
                    && getsockname(socket, address, &length) == 0
            }
        }
        var pipeEnds: [Int32] = [0, 0]
        // pipe2 and accept4 are not imported (GNU extensions); the close-on-exec flag is set apart, so that the
        // daemon the test starts inherits neither end.
        guard bound, pipe(&pipeEnds) == 0, fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC) == 0,
            fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC) == 0
        else {
            let error = Errno(rawValue: errno)
            close(socket)
            throw error
        }
        self.socket = socket
        self.port = Int(UInt16(bigEndian: address.sin_port))
        self.wake = (pipeEnds[0], pipeEnds[1])
        let thread = Thread { [self] in self.acceptUntilStopped() }
        thread.name = "chute-test-loopback-listener"
        thread.start()
    }

    /// A port on 127.0.0.1 that was free a moment ago: the kernel's pick for a listener that is closed at once.
    package static func freePort() throws -> Int {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        return listener.port
    }

    /// The HTTP requests read so far, in the order they came.
    package var httpRequests: [HTTPRequest] { self.received.withLock { $0 } }

    /// How many connections were made so far (not counting ``checkThatItCounts()``'s own).
    package var connections: Int { self.requests.count }

    /// The first bytes each connection sent, escaped, for a failure message.
    package var requests: [String] {
        let ignored = self.ignored.withLock { $0 }
        return self.accepted.withLock { Array($0.dropFirst(ignored)) }
    }

    /// Connects once and waits until that connection is counted, then leaves it out of ``connections``: a listener
    /// that cannot count would make every "no connection" check pass.
    ///
    /// - Throws: the `Errno` of `socket` or `connect`, or ``DeadlineExceeded``.
    package func checkThatItCounts() async throws {
        let before = self.accepted.withLock { $0.count }
        let client = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard client >= 0 else { throw Errno(rawValue: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(self.port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        let error = Errno(rawValue: errno)
        close(client)
        guard connected else { throw error }
        let counted = try await waitUntil("the listener to count the test's own connection", timeout: 10) {
            let count = self.accepted.withLock { $0.count }
            return count > before ? count : nil
        }
        self.ignored.withLock { $0 = counted }
    }

    /// Stops accepting, waits for the thread and closes the socket. Safe to call more than once.
    package func stop() {
        let first = self.isStopping.withLock { stopping in
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        var byte: UInt8 = 1
        _ = write(self.wake.write, &byte, 1)
        self.stopped.wait()
        close(self.socket)
        close(self.wake.read)
        close(self.wake.write)
        for connection in self.held.withLock({ $0 }) { close(connection) }
    }

    private func acceptUntilStopped() {
        defer { self.stopped.signal() }
        while true {
            var descriptors = [
                pollfd(fd: self.socket, events: Int16(POLLIN), revents: 0),
                pollfd(fd: self.wake.read, events: Int16(POLLIN), revents: 0),
            ]
            let ready = try? SystemCall.check("poll") { poll(&descriptors, 2, -1) }
            guard let ready, ready > 0, descriptors[1].revents == 0 else { return }
            let connection = accept(self.socket, nil, nil)
            guard connection >= 0 else { continue }
            switch self.answer {
            case .close:
                self.accepted.withLock { $0.append(Self.firstBytes(of: connection)) }
                close(connection)
            case .http(let statuses):
                var request = Self.readRequest(from: connection)
                let status = self.received.withLock { statuses[min($0.count, statuses.count - 1)] }
                let reply = "HTTP/1.1 \(status) Whatever\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                _ = reply.utf8CString.withUnsafeBufferPointer { write(connection, $0.baseAddress, $0.count - 1) }
                request.status = status
                self.received.withLock { $0.append(request) }
                self.accepted.withLock { $0.append(request.requestLine) }
                close(connection)
            case .silence:
                let request = Self.readRequest(from: connection)
                self.received.withLock { $0.append(request) }
                self.accepted.withLock { $0.append(request.requestLine) }
                self.held.withLock { $0.append(connection) }
            }
        }
    }

    /// Reads one HTTP/1 request: the head, then `Content-Length` bytes of body.
    private static func readRequest(from connection: Int32) -> HTTPRequest {
        var bytes: [UInt8] = []
        var headEnd: Int?
        var bodyLength = 0
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count < 1 << 20 {
            if let end = headEnd, bytes.count >= end + bodyLength { break }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 2000) > 0 else { break }
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[..<count]
            if headEnd == nil, let range = Self.find([13, 10, 13, 10], in: bytes) {
                headEnd = range + 4
                let head = String(decoding: bytes[..<range], as: UTF8.self)
                for line in head.split(separator: "\r\n").dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    if line[..<colon].lowercased() == "content-length" {
                        bodyLength = Int(line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
        }
        let end = headEnd ?? bytes.count
        let lines = String(decoding: bytes[..<max(0, end - 4)], as: UTF8.self).components(separatedBy: "\r\n")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        return HTTPRequest(
            requestLine: lines.first ?? "",
            headers: headers,
            body: Data(bytes[min(end, bytes.count)...].prefix(bodyLength))
        )
    }

    /// Where `pattern` first starts in `bytes`.
    private static func find(_ pattern: [UInt8], in bytes: [UInt8]) -> Int? {
        guard bytes.count >= pattern.count else { return nil }
        return (0...(bytes.count - pattern.count)).first { bytes[$0..<($0 + pattern.count)].elementsEqual(pattern) }
    }

    /// Whatever the client sends within 200 ms, at most 512 bytes, with control characters escaped.
    private static func firstBytes(of connection: Int32) -> String {
        var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 200) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(connection, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        return text.unicodeScalars.map { scalar in
            scalar.properties.generalCategory == .control ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
    }
}
