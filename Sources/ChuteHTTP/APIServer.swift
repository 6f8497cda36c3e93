import ChuteCore
import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import ServiceLifecycle
import SystemPackage

/// The service that serves the ``StatusAPI`` on a Unix socket, mode 0660: the socket's owner and group may use the
/// API, nobody else; and, when `settings.api.listen` asks for it, on TCP too, where every request must carry the
/// bearer token of `settings.api.tokenFile`.
///
/// A socket file left by a daemon that died is replaced; one that a live process still answers on is not (that
/// daemon keeps it, and this one fails to start). The socket is removed at shutdown.
package struct APIServer: Service {
    private let api: StatusAPI
    private let socket: FilePath
    private let settings: APISettings
    private let logger: Logger

    /// - Parameters:
    ///   - socket: the Unix socket's path.
    ///   - settings: the TCP address and token file, if any (a `listen` without `tokenFile` is refused by the
    ///     rules reader, and here too).
    package init(api: StatusAPI, socket: FilePath, settings: APISettings = APISettings(), logger: Logger) {
        self.api = api
        self.socket = socket
        self.settings = settings
        self.logger = logger
    }

    package func run() async throws {
        guard let listen = self.settings.listen else { return try await self.serveSocket() }
        guard let tokenFile = self.settings.tokenFile, let (host, port) = APISettings.hostAndPort(listen) else {
            throw APIServerError(address: listen, reason: "TCP needs a HOST:PORT and a tokenFile")
        }
        let token = try BearerToken<BasicRequestContext>.read(from: tokenFile, for: listen)
        let router = self.api.makeRouter(token: token)
        let logger = self.logger
        let tcp = Application(
            router: router,
            server: self.server,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { _ in logger.info("Status API listening", metadata: ["address": "\(listen)"]) },
            logger: logger
        )
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.serveSocket() }
            group.addTask { try await tcp.run() }
        }
    }

    /// HTTP/1 whose connections close once they have been idle for `idleTimeout`: a client that stalls in the middle
    /// of an upload is dropped (and its partial upload removed), as is one that keeps a connection open for nothing.
    private var server: HTTPServerBuilder {
        let timeout = self.settings.idleTimeout.components
        let nanoseconds = timeout.seconds * 1_000_000_000 + timeout.attoseconds / 1_000_000_000
        return .http1(configuration: HTTP1Channel.Configuration(idleTimeout: TimeAmount.nanoseconds(nanoseconds)))
    }

    private func serveSocket() async throws {
        try Self.removeStaleSocket(at: self.socket)
        try FileManager.default.createDirectory(
            atPath: self.socket.removingLastComponent().string,
            withIntermediateDirectories: true
        )
        let (socket, logger) = (self.socket, self.logger)
        let application = Application(
            router: self.api.makeRouter(),
            server: self.server,
            configuration: ApplicationConfiguration(address: .unixDomainSocket(path: socket.string)),
            onServerRunning: { _ in
                // Created with the process's umask, which never grants more than 0660 asks for writing (connecting
                // needs write permission): the chmod only widens it to the group.
                chmod(socket.string, 0o660)
                logger.info("Status API listening", metadata: ["socket": "\(socket)"])
            },
            logger: logger
        )
        defer { unlink(socket.string) }
        try await application.run()
    }

    /// Removes a socket file that nothing answers on.
    ///
    /// - Throws: ``APIServerError`` when the path is something else than a socket, or a live process answers on it.
    static func removeStaleSocket(at path: FilePath) throws {
        // The attributes of the path itself, not of what a symbolic link there names.
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path.string) else { return }
        guard attributes[.type] as? FileAttributeType == .typeSocket else {
            throw APIServerError(socket: path, reason: "it exists and is not a socket")
        }
        if UnixSocket.answers(at: path) {
            throw APIServerError(socket: path, reason: "another process is serving on it")
        }
        unlink(path.string)
    }
}

/// The status API cannot listen.
package struct APIServerError: Error, CustomStringConvertible {
    /// The socket's path or the TCP address.
    package var address: String
    package var reason: String

    init(socket: FilePath, reason: String) {
        self.address = socket.string
        self.reason = reason + "; set settings.api.socket to another path"
    }

    init(address: String, reason: String) {
        self.address = address
        self.reason = reason
    }

    package var description: String {
        "cannot serve the status API on \(self.address): \(self.reason)"
    }
}

/// Connecting to a Unix socket, for the liveness check of a socket file.
enum UnixSocket {
    /// Whether a process accepts connections on the socket at `path`.
    static func answers(at path: FilePath) -> Bool {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.string.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
        }
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}
