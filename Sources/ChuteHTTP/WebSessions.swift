import Foundation
import Hummingbird
import Synchronization

/// The browser sessions of the web page on TCP: a browser cannot send the bearer token on a page load, so the page
/// asks for the token once (`POST /ui/login`) and gets a session in an `HttpOnly`, `SameSite=Strict` cookie.
///
/// A session is 32 random bytes that only this process knows, not the token: the browser never stores the token,
/// and a session ends when it expires, on sign-out, or when the daemon stops. Sessions are compared in constant time,
/// all of them, as the token is.
package final class WebSessions: Sendable {
    /// The cookie's name.
    package static let cookieName = "chute_session"
    /// How long a session lasts after sign-in.
    package static let lifetime: Duration = .seconds(24 * 3600)
    /// How many sessions are kept; signing in beyond that ends the oldest.
    package static let limit = 64

    private struct Session {
        var value: [UInt8]
        var expires: ContinuousClock.Instant
    }

    private let token: [UInt8]
    private let sessions = Mutex<[Session]>([])

    /// - Parameter token: the bearer token of `settings.api.tokenFile`.
    package init(token: [UInt8]) {
        self.token = token
    }

    /// A new session if `candidate` is the token, else `nil`.
    ///
    /// - Returns: the session's value, 64 hexadecimal digits, for the cookie.
    package func signIn(with candidate: [UInt8]) -> String? {
        guard BearerToken<BasicRequestContext>.constantTimeEqual(candidate, self.token) else { return nil }
        var generator = SystemRandomNumberGenerator()
        let value = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let now = ContinuousClock.now
        self.sessions.withLock { sessions in
            sessions.removeAll { $0.expires <= now }
            if sessions.count >= Self.limit { sessions.removeFirst(sessions.count - Self.limit + 1) }
            sessions.append(Session(value: Array(Self.hex(value).utf8), expires: now + Self.lifetime))
        }
        return Self.hex(value)
    }

    /// Whether `value` (a cookie's) is a live session.
    package func isValid(_ value: String) -> Bool {
        let candidate = Array(value.utf8)
        let now = ContinuousClock.now
        return self.sessions.withLock { sessions in
            // Every session is compared, to the end: the time taken says nothing of which one came close.
            var found = false
            for session in sessions where session.expires > now {
                found = BearerToken<BasicRequestContext>.constantTimeEqual(candidate, session.value) || found
            }
            return found
        }
    }

    /// Ends the session `value`, if it is one.
    package func signOut(_ value: String) {
        let candidate = Array(value.utf8)
        self.sessions.withLock { sessions in
            sessions.removeAll { BearerToken<BasicRequestContext>.constantTimeEqual(candidate, $0.value) }
        }
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
