import Foundation

/// Runs blocking work (a C library's conversion, a child process waited for) on a thread of its own, and awaits it.
///
/// Swift Testing runs the tests of every target in one process, in parallel, on Swift's cooperative pool: two
/// threads on a 2-core machine. A test that blocks such a thread for a long loop (the corpus tests convert some 150
/// files one after another) starves every other test of it; two of them at once stopped the watcher tests for 86 s.
/// Awaiting each blocking step here keeps the pool free. Assertions stay in the caller, where the test is known.
package func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.name = "chute-test-blocking"
        thread.start()
    }
}
