import Dispatch

/// Runs blocking work (file hashing, directory syncs, sniffing on slow mounts) on Dispatch threads, never on Swift's
/// cooperative pool, whose two threads here must stay free for the watcher, the queue and signal handling.
package enum Blocking {
    private static let queue = DispatchQueue(label: "chute.blocking", attributes: .concurrent)

    /// Runs `body` on a Dispatch thread and returns its result.
    package static func run<Value: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> Value
    ) async throws(Failure) -> Value {
        let result: Result<Value, Failure> = await withCheckedContinuation { continuation in
            self.queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> Value in try body() })
            }
        }
        return try result.get()
    }
}
