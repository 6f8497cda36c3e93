import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The web page that the daemon serves at `/`: plain HTML, CSS and JavaScript (``WebAssets``), compiled into the
/// binary, that show and steer the daemon through the status API.
///
/// The page and its assets hold no data and are served to anyone who reaches the address; everything it shows comes
/// from `/api`, behind the bearer token on TCP. There a browser signs in once with the token (`POST /ui/login`) and
/// gets a session cookie (``WebSessions``); on the Unix socket, whose permissions decide, nothing is asked.
struct WebPage: Sendable {
    /// The header every request of the page carries, which the API requires of a request that changes something and
    /// is authorised by the session cookie alone (see ``BearerToken``).
    static let requestHeader = HTTPField.Name("X-Chute-Page")!

    /// The sessions on TCP; `nil` on the Unix socket, where no sign-in is needed.
    let sessions: WebSessions?

    /// `GET /ui/session`: whether this address needs a sign-in, and whether the browser has one.
    struct SessionState: Codable, Sendable {
        var required: Bool
        var signedIn: Bool
    }

    /// `POST /ui/login`'s body.
    struct Login: Codable, Sendable {
        var token: String
    }

    /// Adds the page's routes.
    func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in Self.asset(WebAssets.html, type: "text/html; charset=utf-8") }
        router.get("/ui/app.css") { _, _ in Self.asset(WebAssets.css, type: "text/css; charset=utf-8") }
        router.get("/ui/app.js") { _, _ in Self.asset(WebAssets.script, type: "text/javascript; charset=utf-8") }
        router.get("/ui/session") { request, _ in
            try StatusAPI.json(SessionState(required: self.sessions != nil, signedIn: self.isSignedIn(request)))
        }
        router.post("/ui/login") { request, _ in try await self.login(request) }
        router.post("/ui/logout") { request, _ in
            try Self.requirePageHeader(request)
            if let sessions = self.sessions, let cookie = request.cookies[WebSessions.cookieName] {
                sessions.signOut(cookie.value)
            }
            var response = try StatusAPI.json(SessionState(required: self.sessions != nil, signedIn: false))
            response.setCookie(Self.cookie(value: "", maxAge: 0))
            return response
        }
    }

    private func isSignedIn(_ request: Request) -> Bool {
        guard let sessions = self.sessions, let cookie = request.cookies[WebSessions.cookieName] else { return false }
        return sessions.isValid(cookie.value)
    }

    private func login(_ request: Request) async throws -> Response {
        try Self.requirePageHeader(request)
        guard let sessions = self.sessions else {
            throw StatusAPI.problem(.notFound, "this address needs no sign-in")
        }
        let body = try await request.body.collect(upTo: StatusAPI.maximumBodySize)
        guard let login = try? JSONDecoder().decode(Login.self, from: Data(body.readableBytesView)) else {
            throw StatusAPI.problem(.badRequest, "expected a JSON body {\"token\": \"…\"}")
        }
        let token = login.token.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty, let session = sessions.signIn(with: Array(token.utf8)) else {
            throw StatusAPI.problem(.unauthorized, "wrong token")
        }
        var response = try StatusAPI.json(SessionState(required: true, signedIn: true))
        response.setCookie(Self.cookie(value: session, maxAge: Int(WebSessions.lifetime.components.seconds)))
        return response
    }

    /// The session cookie: never readable by scripts, never sent with a request that another site starts.
    private static func cookie(value: String, maxAge: Int) -> Cookie {
        Cookie(
            name: WebSessions.cookieName,
            value: value,
            maxAge: maxAge,
            path: "/",
            httpOnly: true,
            sameSite: .strict
        )
    }

    private static func requirePageHeader(_ request: Request) throws {
        guard request.headers[Self.requestHeader] != nil else {
            throw StatusAPI.problem(.forbidden, "a request of the web page carries its X-Chute-Page header")
        }
    }

    /// One of the page's files, with headers that keep it from running anything but its own script and from being
    /// framed by another site.
    private static func asset(_ text: String, type: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = type
        headers[.cacheControl] = "no-cache"
        headers[.contentSecurityPolicy] =
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
        headers[.xContentTypeOptions] = "nosniff"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
