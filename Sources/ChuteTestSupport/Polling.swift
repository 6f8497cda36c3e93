import Foundation

/// A condition that did not become true before its deadline.
package struct DeadlineExceeded: Error, CustomStringConvertible {
    package var what: String
    package var seconds: Double
    package var description: String { "timed out after \(self.seconds) s waiting for \(self.what)" }
}

/// Checks `condition` every 50 ms until it returns a value, or throws ``DeadlineExceeded``.
///
/// Use it for outcomes on disk and in logs; it never asserts on how long anything took.
@discardableResult
package func waitUntil<Value>(
    _ what: @autoclosure () -> String,
    timeout seconds: Double = 30,
    _ condition: () async throws -> Value?
) async throws -> Value {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while true {
        if let value = try await condition() { return value }
        guard ContinuousClock.now < deadline else { throw DeadlineExceeded(what: what(), seconds: seconds) }
        try await Task.sleep(for: .milliseconds(50))
    }
}
