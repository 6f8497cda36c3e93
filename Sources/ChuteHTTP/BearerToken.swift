import Foundation
import HTTPTypes
import Hummingbird
import SystemPackage

/// Refuses every request that does not carry `Authorization: Bearer TOKEN` with the configured token, comparing in
/// constant time: how long a refusal takes says nothing of how much of a guess was right.
///
/// With ``WebSessions``, a request without an `Authorization` header may instead carry the web page's session
/// cookie; then a request that changes something (any method but GET and HEAD) must also carry the page's
/// `X-Chute-Page` header, which a cross-site form cannot send and a cross-origin script cannot send without a CORS
/// preflight that the API never grants: with the `SameSite=Strict` cookie, that keeps other pages from steering the
/// daemon through a signed-in browser.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    private let token: [UInt8]
    private let sessions: WebSessions?

    /// - Parameters:
    ///   - token: the token, at least one byte.
    ///   - sessions: the web page's sessions, whose cookie is taken as well; `nil` for the token alone.
    init(_ token: [UInt8], sessions: WebSessions? = nil) {
        precondition(!token.isEmpty, "an empty token would let anyone in")
        self.token = token
        self.sessions = sessions
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let header = request.headers[.authorization] {
            guard header.hasPrefix("Bearer "), Self.constantTimeEqual(Array(header.utf8.dropFirst(7)), self.token)
            else {
                throw APIProblem(status: .unauthorized, message: "a valid bearer token is required")
            }
            return try await next(request, context)
        }
        guard let sessions = self.sessions, let cookie = request.cookies[WebSessions.cookieName],
            sessions.isValid(cookie.value)
        else {
            throw APIProblem(status: .unauthorized, message: "a valid bearer token is required")
        }
        if request.method != .get, request.method != .head, request.headers[WebPage.requestHeader] == nil {
            throw APIProblem(status: .forbidden, message: "a request of the web page carries its X-Chute-Page header")
        }
        return try await next(request, context)
    }

    /// Whether `a` equals `b`, looking at every byte of `a` whatever the first difference.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        difference |= UInt8(a.count == b.count ? 0 : 1)
        for index in a.indices {
            difference |= a[index] ^ b[index % b.count]
        }
        return difference == 0
    }

    /// The token in `file`: its content without surrounding white space.
    ///
    /// - Throws: ``APIServerError`` when the file cannot be read or holds no token.
    static func read(from file: FilePath, for address: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: file.string) else {
            throw APIServerError(address: address, reason: "cannot read its tokenFile \(file)")
        }
        let token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw APIServerError(address: address, reason: "its tokenFile \(file) is empty") }
        return Array(token.utf8)
    }
}
