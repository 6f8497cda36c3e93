import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SystemPackage

/// A client of the status API, for the CLI: on the daemon's Unix socket, or on its TCP address with the bearer
/// token; one request per connection, through NIO's HTTP/1 pipeline (see docs/decisions.md for why not
/// async-http-client). Files go up and come down in chunks, never held whole.
package struct APIClient: Sendable {
    /// Where the API answers.
    package enum Endpoint: Sendable, CustomStringConvertible {
        /// The daemon's Unix socket, whose permissions decide who may use it.
        case socket(FilePath)
        /// A TCP address, each request with the bearer token.
        case tcp(host: String, port: Int, token: String)

        package var description: String {
            switch self {
            case .socket(let path): path.string
            case .tcp(let host, let port, _): "\(host):\(port)"
            }
        }
    }

    /// The API answered.
    package struct Reply: Sendable {
        package var status: Int
        package var body: Data
    }

    /// No daemon answers on the socket or at the address.
    package struct Unreachable: Error, CustomStringConvertible {
        package var place: String
        package var cause: String

        package var description: String {
            "no Chute daemon answers on \(self.place) (\(self.cause)); is `chute run` running with this config?"
        }
    }

    package let endpoint: Endpoint

    package init(socket: FilePath) {
        self.endpoint = .socket(socket)
    }

    package init(endpoint: Endpoint) {
        self.endpoint = endpoint
    }

    /// Sends one request and reads the whole reply.
    ///
    /// - Throws: ``Unreachable`` when nothing listens on the socket; an I/O error if the connection breaks.
    /// - Parameter headers: more header fields of the request.
    package func send(
        _ method: HTTPMethod,
        _ path: String,
        body: Data? = nil,
        headers: [(String, String)] = []
    ) async throws -> Reply {
        let channel = try await self.connect()
        var head = self.head(method, path)
        head.headers.add(contentsOf: headers)
        if body != nil { head.headers.add(name: "Content-Type", value: "application/json") }
        return try await Self.exchange(on: channel, head: head, body: body)
    }

    /// Sends the file at `file` as the body of a `PUT`, in chunks, and reads the reply.
    ///
    /// - Parameters:
    ///   - headers: more header fields of the request.
    ///   - sent: called with the bytes sent so far, after each chunk.
    /// - Throws: ``Unreachable``; the file's read error; an I/O error if the connection breaks.
    package func upload(
        _ file: FilePath,
        to path: String,
        headers: [(String, String)] = [],
        sent: @escaping @Sendable (Int64) -> Void = { _ in }
    ) async throws -> Reply {
        let descriptor = try SystemPackage.FileDescriptor.open(file, .readOnly, options: [.closeOnExec])
        defer { try? descriptor.close() }
        let size = try descriptor.seek(offset: 0, from: .end)
        _ = try descriptor.seek(offset: 0, from: .start)
        let channel = try await self.connect()
        var head = self.head(.PUT, path)
        head.headers.add(contentsOf: headers)
        head.headers.add(name: "Content-Type", value: "application/octet-stream")
        head.headers.add(name: "Content-Length", value: String(size))
        head.headers.add(name: "Connection", value: "close")
        return try await channel.executeThenClose { inbound, outbound in
            var total: Int64 = 0
            var chunk = [UInt8](repeating: 0, count: 256 * 1024)
            do {
                try await outbound.write(.head(head))
                while true {
                    let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                    if count == 0 { break }
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: chunk[..<count]))))
                    total += Int64(count)
                    sent(total)
                }
                try await outbound.write(.end(nil))
            } catch is ChannelError {
                // The daemon answered before the whole body was sent (a refusal such as 413) and closed its side:
                // its answer is still there to read.
            }
            return try await Self.read(inbound, limit: 1 << 20)
        }
    }

    /// `GET`s `path` into the file at `file` (created, or replaced), in chunks as they come.
    ///
    /// - Returns: the reply, its body empty when it went to the file (a 2xx answer), else the refusal's.
    package func download(_ path: String, to file: FilePath) async throws -> Reply {
        let channel = try await self.connect()
        var head = self.head(.GET, path)
        head.headers.add(name: "Connection", value: "close")
        return try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(contentsOf: [.head(head), .end(nil)])
            var status = 0
            var refusal = Data()
            var descriptor: SystemPackage.FileDescriptor?
            defer { try? descriptor?.close() }
            for try await part in inbound {
                switch part {
                case .head(let head):
                    status = Int(head.status.code)
                    if (200..<300).contains(status) {
                        descriptor = try SystemPackage.FileDescriptor.open(
                            file,
                            .writeOnly,
                            options: [.create, .truncate, .closeOnExec],
                            permissions: [.ownerReadWrite, .groupRead, .otherRead]
                        )
                    }
                case .body(let buffer):
                    if let descriptor {
                        _ = try buffer.withUnsafeReadableBytes { try descriptor.writeAll($0) }
                    } else {
                        refusal.append(contentsOf: buffer.readableBytesView.prefix(1 << 20))
                    }
                case .end:
                    return Reply(status: status, body: refusal)
                }
            }
            try Task.checkCancellation()
            return Reply(status: status, body: refusal)
        }
    }

    /// A request head for the endpoint: its `Host`, and on TCP the bearer token.
    private func head(_ method: HTTPMethod, _ path: String) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        switch self.endpoint {
        case .socket:
            head.headers.add(name: "Host", value: "chute")
        case .tcp(let host, let port, let token):
            head.headers.add(name: "Host", value: "\(host):\(port)")
            head.headers.add(name: "Authorization", value: "Bearer \(token)")
        }
        return head
    }

    /// A connection to the endpoint.
    ///
    /// - Throws: ``Unreachable`` when nothing listens there.
    private func connect() async throws -> NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart> {
        let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        do {
            switch self.endpoint {
            case .socket(let path):
                return try await bootstrap.connect(
                    unixDomainSocketPath: path.string,
                    channelInitializer: Self.httpChannel
                )
            case .tcp(let host, let port, _):
                return try await bootstrap.connect(host: host, port: port, channelInitializer: Self.httpChannel)
            }
        } catch let error as IOError {
            // The system's words alone: NIO's own description names its internal call.
            throw Unreachable(place: self.endpoint.description, cause: String(cString: strerror(error.errnoCode)))
        } catch {
            throw Unreachable(place: self.endpoint.description, cause: "\(error)")
        }
    }

    /// Sets up a connected channel for one HTTP/1 exchange: the `channelInitializer` of every client connection.
    package static func httpChannel(
        _ channel: any Channel
    ) -> EventLoopFuture<NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHTTPClientHandlers()
            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                wrappingChannelSynchronously: channel
            )
        }
    }

    /// Sends one request on a connected channel (adding `Connection: close` and the body's length), reads the reply
    /// and closes the channel.
    ///
    /// - Parameter limit: the most body bytes kept; the rest of a longer reply is read and dropped.
    /// - Throws: an I/O error if the connection breaks; `CancellationError` when the task is cancelled.
    package static func exchange(
        on channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>,
        head: HTTPRequestHead,
        body: Data?,
        limit: Int = .max
    ) async throws -> Reply {
        try await channel.executeThenClose { inbound, outbound in
            var head = head
            head.headers.add(name: "Connection", value: "close")
            if let body {
                head.headers.add(name: "Content-Length", value: String(body.count))
            } else if head.method == .POST {
                head.headers.add(name: "Content-Length", value: "0")
            }
            // One write for the whole request: the server answers a GET as soon as it has read the head and closes
            // the connection, so an `.end` written after the head could find the channel closed.
            var parts: [HTTPClientRequestPart] = [.head(head)]
            if let body { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            parts.append(.end(nil))
            try await outbound.write(contentsOf: parts)
            return try await Self.read(inbound, limit: limit)
        }
    }
}

extension APIClient {
    /// Reads a reply, keeping at most `limit` bytes of its body (the rest is read and dropped).
    static func read(
        _ inbound: NIOAsyncChannelInboundStream<HTTPClientResponsePart>,
        limit: Int
    ) async throws -> Reply {
        var status = 0
        var received = Data()
        for try await part in inbound {
            switch part {
            case .head(let head):
                status = Int(head.status.code)
            case .body(let buffer):
                received.append(contentsOf: buffer.readableBytesView.prefix(max(0, limit - received.count)))
            case .end:
                return Reply(status: status, body: received)
            }
        }
        try Task.checkCancellation()
        return Reply(status: status, body: received)
    }
}
