import ChuteCore
import ChuteRuntime
import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import NIOHTTP1
import SystemPackage

/// The routes of hand-offs between agents of a shared store (``HandoffDesk``), under `/api/handoff/ID`: the source
/// (`GET source`), an output sent back under its temporary name (`PUT file`, `X-Chute-Name` and `X-Chute-SHA256`),
/// removed (`DELETE file`), placed (`POST place`), and the sidecar (`POST sidecar`). Each request's bearer is its
/// claim's `TOKEN.KEY`, which the store grants, not the API's token.
struct HandoffRoutes: Sendable {
    let desk: HandoffDesk

    /// The header naming an output sent back, percent-encoded.
    static let nameHeader = HTTPField.Name("X-Chute-Name")!
    /// The header carrying the SHA-256 of an output sent back.
    static let sha256Header = HTTPField.Name("X-Chute-SHA256")!

    /// The body of `POST sidecar`.
    struct SidecarRequest: Codable {
        /// The bytes of the output's name the sidecar is named after.
        var name: Data
        var sidecar: Sidecar
    }

    /// The answer to `PUT file`.
    struct Received: Codable {
        var inode: UInt64
    }

    func add(to router: Router<BasicRequestContext>) {
        router.get("/api/handoff/:id/source") { request, context in
            let granted = try await self.grant(request, context)
            let (path, size) = try await Self.answer { () async throws(HandoffDesk.Refusal) in
                try await self.desk.source(granted)
            }
            var headers = HTTPFields()
            headers[.contentType] = "application/octet-stream"
            headers[.contentLength] = String(size)
            return Response(
                status: .ok,
                headers: headers,
                body: try await FileIO().loadFile(path: path.string, context: context)
            )
        }
        router.put("/api/handoff/:id/file") { request, context in
            let granted = try await self.grant(request, context)
            guard let expected = request.headers[Self.sha256Header] else {
                throw StatusAPI.problem(.badRequest, "an output sent back carries its SHA-256 in X-Chute-SHA256")
            }
            let name = try Self.name(request)
            let path = try await Self.answer { () throws(HandoffDesk.Refusal) in
                try self.desk.destination(of: name, for: granted)
            }
            try await Self.write(request.body, to: path)
            let inode = try await Self.answer { () async throws(HandoffDesk.Refusal) in
                try await self.desk.received(path, expected: expected, for: granted)
            }
            return try StatusAPI.json(Received(inode: inode))
        }
        router.delete("/api/handoff/:id/file") { request, context in
            let granted = try await self.grant(request, context)
            self.desk.discard([try Self.name(request)], for: granted)
            return Response(status: .noContent)
        }
        router.post("/api/handoff/:id/place") { request, context in
            let granted = try await self.grant(request, context)
            let placement = try await Self.decode(HandoffPlacement.self, request)
            let placed = try await Self.answer { () async throws(HandoffDesk.Refusal) in
                try await self.desk.place(placement, for: granted)
            }
            return try StatusAPI.json(placed)
        }
        router.post("/api/handoff/:id/sidecar") { request, context in
            let granted = try await self.grant(request, context)
            let asked = try await Self.decode(SidecarRequest.self, request)
            guard let name = FilePath.Component(bytes: asked.name), name.kind == .regular else {
                throw StatusAPI.problem(.badRequest, "the output's name is not a file name")
            }
            try await Self.answer { () async throws(HandoffDesk.Refusal) in
                try await self.desk.writeSidecar(asked.sidecar, namedAfter: name, for: granted)
            }
            return Response(status: .noContent)
        }
    }

    private func grant(_ request: Request, _ context: BasicRequestContext) async throws -> HandoffDesk.Granted {
        let id = try context.parameters.require("id")
        let bearer = request.headers[.authorization].flatMap { value in
            value.hasPrefix("Bearer ") ? String(value.dropFirst("Bearer ".count)) : nil
        }
        return try await Self.answer { () async throws(HandoffDesk.Refusal) in
            try await self.desk.grant(id, bearer: bearer)
        }
    }

    /// Runs a step of the desk, its refusal as the API's problem: 403 for a claim that no longer holds (the client's
    /// lease was lost), 409 for a file that changed, 422 for bytes that arrived changed.
    private static func answer<T>(_ step: () async throws(HandoffDesk.Refusal) -> T) async throws -> T {
        do {
            return try await step()
        } catch {
            let status: HTTPResponse.Status =
                switch error {
                case .unauthorized: .forbidden
                case .conflict: .conflict
                case .badRequest: .badRequest
                case .corrupted: .unprocessableContent
                case .failed: .internalServerError
                }
            throw StatusAPI.problem(status, error.description)
        }
    }

    private static func name(_ request: Request) throws -> String {
        guard let name = request.headers[Self.nameHeader]?.removingPercentEncoding else {
            throw StatusAPI.problem(.badRequest, "an output sent back is named by X-Chute-Name")
        }
        return name
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ request: Request) async throws -> T {
        let body = try await request.body.collect(upTo: 1 << 20)
        do {
            return try JSONDecoder().decode(type, from: Data(body.readableBytesView))
        } catch {
            throw StatusAPI.problem(.badRequest, "not a hand-off request: \(error)")
        }
    }

    /// Writes a request's body to `path` (created or replaced), chunk by chunk off the cooperative threads, and syncs
    /// it.
    private static func write(_ body: RequestBody, to path: FilePath) async throws {
        let descriptor: SystemPackage.FileDescriptor
        do {
            descriptor = try SystemPackage.FileDescriptor.open(
                path,
                .writeOnly,
                options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite]
            )
        } catch {
            throw StatusAPI.problem(.internalServerError, "cannot write \(path): \(error)")
        }
        defer { try? descriptor.close() }
        do {
            for try await chunk in body {
                try await Blocking.run { () throws(Errno) in
                    do {
                        _ = try chunk.withUnsafeReadableBytes { try descriptor.writeAll($0) }
                    } catch {
                        throw error as? Errno ?? .ioError
                    }
                }
            }
            // The corresponding C function is `fsync`.
            try await Blocking.run { () throws(Errno) in
                guard fsync(descriptor.rawValue) == 0 else { throw Errno(rawValue: errno) }
            }
        } catch {
            SystemCall.unlink(path)
            throw StatusAPI.problem(.internalServerError, "cannot write \(path): \(error)")
        }
    }
}

/// The requests of a hand-off to the agent that found a job's file (``HandoffTransport``), on its `agentURL`, each
/// with the claim's `TOKEN.KEY` as its bearer.
package struct HTTPHandoffTransport: HandoffTransport {
    package let owner: String
    private let client: APIClient
    private let jobID: String

    /// - Parameter ticket: its URL is `http://HOST:PORT`, as the configuration reader allows it.
    package init(ticket: HandoffTicket, claim: SharedClaim) {
        let components = URLComponents(string: ticket.url)
        self.owner = ticket.owner
        self.jobID = claim.id
        self.client = APIClient(
            endpoint: .tcp(
                host: components?.host ?? ticket.url,
                port: components?.port ?? 80,
                token: "\(claim.token).\(ticket.key)"
            )
        )
    }

    private var base: String { "/api/handoff/\(self.jobID)" }

    package func fetchSource(to file: FilePath) async throws -> String {
        let reply = try await self.client.download("\(self.base)/source", to: file)
        try self.check(reply)
        return try await Blocking.run { try SourceInspector.sha256(of: file) }
    }

    package func deliver(_ file: FilePath, as name: String, sha256: String) async throws -> UInt64 {
        let reply = try await self.client.upload(
            file,
            to: "\(self.base)/file",
            headers: [("X-Chute-Name", Self.encoded(name)), ("X-Chute-SHA256", sha256)]
        )
        if reply.status == 422 { throw HandoffError.corrupted(Self.message(reply)) }
        try self.check(reply)
        return try JSONDecoder().decode(HandoffRoutes.Received.self, from: reply.body).inode
    }

    package func place(_ placement: HandoffPlacement) async throws -> HandoffPlaced {
        let reply = try await self.client.send(.POST, "\(self.base)/place", body: try JSONEncoder().encode(placement))
        try self.check(reply)
        return try JSONDecoder().decode(HandoffPlaced.self, from: reply.body)
    }

    package func writeSidecar(_ sidecar: Sidecar, namedAfter name: FilePath.Component) async throws {
        let request = HandoffRoutes.SidecarRequest(name: Data(name.bytes), sidecar: sidecar)
        try self.check(
            try await self.client.send(.POST, "\(self.base)/sidecar", body: try JSONEncoder().encode(request))
        )
    }

    package func discard(_ names: [String]) async {
        for name in names {
            _ = try? await self.client.send(
                .DELETE,
                "\(self.base)/file",
                headers: [("X-Chute-Name", Self.encoded(name))]
            )
        }
    }

    /// Throws for an answer that is not a success: ``LeaseLost`` for 403 (the claim no longer holds there).
    private func check(_ reply: APIClient.Reply) throws {
        guard !(200..<300).contains(reply.status) else { return }
        let message = Self.message(reply)
        if reply.status == 403 { throw LeaseLost(jobID: self.jobID, why: "agent \(self.owner) says: \(message)") }
        throw HandoffError.refused(status: reply.status, message: message)
    }

    private static func message(_ reply: APIClient.Reply) -> String {
        (try? JSONDecoder().decode(API.Problem.self, from: reply.body).error)
            ?? String(decoding: reply.body.prefix(300), as: UTF8.self)
    }

    private static func encoded(_ name: String) -> String {
        name.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: ".-_"))) ?? ""
    }
}
