import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SystemPackage

/// A client of the status API on its Unix socket, for the CLI: one request per connection, through NIO's HTTP/1
/// pipeline (see docs/decisions.md for why not async-http-client).
package struct APIClient: Sendable {
    /// The API answered.
    package struct Reply: Sendable {
        package var status: Int
        package var body: Data
    }

    /// No daemon answers on the socket.
    package struct Unreachable: Error, CustomStringConvertible {
        package var socket: FilePath
        package var cause: String

        package var description: String {
            "no Chute daemon answers on \(self.socket) (\(self.cause)); is `chute run` running with this config?"
        }
    }

    package let socket: FilePath

    package init(socket: FilePath) {
        self.socket = socket
    }

    /// Sends one request and reads the whole reply.
    ///
    /// - Throws: ``Unreachable`` when nothing listens on the socket; an I/O error if the connection breaks.
    package func send(_ method: HTTPMethod, _ path: String, body: Data? = nil) async throws -> Reply {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(unixDomainSocketPath: self.socket.string, channelInitializer: Self.httpChannel)
        } catch let error as IOError {
            // The system's words alone: NIO's own description names its internal call.
            throw Unreachable(socket: self.socket, cause: String(cString: strerror(error.errnoCode)))
        } catch {
            throw Unreachable(socket: self.socket, cause: "\(error)")
        }
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
        head.headers.add(name: "Host", value: "chute")
        if body != nil { head.headers.add(name: "Content-Type", value: "application/json") }
        return try await Self.exchange(on: channel, head: head, body: body)
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
}
