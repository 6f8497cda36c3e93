import ChuteCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends one notification: a POST to an `http://` URL through NIO's HTTP/1 pipeline (the status API client's), or
/// to an `https://` URL through FoundationNetworking's `URLSession` (libcurl), each try bounded by a timeout.
///
/// See docs/decisions.md, "Notifications", for why two clients.
struct NotificationPoster: Sendable {
    /// A try that took longer than the timeout.
    struct TimedOut: Error, CustomStringConvertible {
        var timeout: Duration
        var description: String { "no answer within \(ValueParsing.describe(self.timeout))" }
    }

    /// A URL that cannot be sent to (the config reader refuses them; kept for a URL built elsewhere).
    struct UnusableURL: Error, CustomStringConvertible {
        var description: String { "not an http:// or https:// URL with a host" }
    }

    /// The most bytes of a reply kept (they are not used: only the status is).
    private static let replyLimit = 4096

    /// How long one try may take, connecting included.
    let timeout: Duration
    private let session: URLSession

    init(timeout: Duration) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(timeout)
        configuration.timeoutIntervalForResource = Self.seconds(timeout)
        self.session = URLSession(configuration: configuration)
    }

    /// POSTs `body` to `url` with `headers` (and `Authorization: Basic` when the URL has credentials).
    ///
    /// - Returns: the HTTP status of the reply.
    /// - Throws: ``TimedOut``, a connection error, or `CancellationError`.
    func post(_ url: String, headers: [(String, String)], body: Data) async throws -> Int {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw UnusableURL() }
        var allHeaders = headers
        if let user = components.user {
            let credentials =
                (components.user?.removingPercentEncoding ?? user) + ":"
                + (components.password?.removingPercentEncoding ?? "")
            allHeaders.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
        }
        let headers = allHeaders
        switch scheme {
        case "http":
            let path =
                (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
            let port = components.port ?? 80
            return try await self.withTimeout {
                try await Self.postPlain(
                    host: host,
                    port: port,
                    path: path,
                    headers: headers,
                    body: body,
                    connectTimeout: self.timeout
                )
            }
        case "https":
            var plain = components
            plain.user = nil
            plain.password = nil
            guard let address = plain.url else { throw UnusableURL() }
            return try await self.withTimeout {
                try await self.postTLS(address, headers: headers, body: body)
            }
        default:
            throw UnusableURL()
        }
    }

    /// Runs `operation`, or throws ``TimedOut`` once ``timeout`` has passed (cancelling it).
    private func withTimeout(_ operation: @escaping @Sendable () async throws -> Int) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask { try await operation() }
            group.addTask { [timeout] in
                try await Task.sleep(for: timeout)
                throw TimedOut(timeout: timeout)
            }
            defer { group.cancelAll() }
            guard let status = try await group.next() else { throw CancellationError() }
            return status
        }
    }

    /// One POST over a plain TCP connection, through NIO.
    private static func postPlain(
        host: String,
        port: Int,
        path: String,
        headers: [(String, String)],
        body: Data,
        connectTimeout: Duration
    ) async throws -> Int {
        let nanoseconds =
            connectTimeout.components.seconds * 1_000_000_000 + connectTimeout.components.attoseconds / 1_000_000_000
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.nanoseconds(nanoseconds))
            .connect(host: host, port: port, channelInitializer: APIClient.httpChannel)
        var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
        head.headers.add(name: "Host", value: port == 80 ? host : "\(host):\(port)")
        head.headers.add(name: "User-Agent", value: "chute")
        for (name, value) in headers { head.headers.add(name: name, value: value) }
        return try await APIClient.exchange(on: channel, head: head, body: body, limit: Self.replyLimit).status
    }

    /// One POST over TLS, through `URLSession`.
    private func postTLS(_ url: URL, headers: [(String, String)], body: Data) async throws -> Int {
        var request = URLRequest(url: url, timeoutInterval: Self.seconds(self.timeout))
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("chute", forHTTPHeaderField: "User-Agent")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (_, response) = try await self.session.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
