import ChuteWatch
import Synchronization

/// Collects what a watcher reports, on its own task, so that a test can wait for a condition on the events with a
/// deadline instead of sleeping.
final class EventCollector: Sendable {
    private struct Waiter {
        var condition: @Sendable ([FileEvent]) -> Bool
        var continuation: CheckedContinuation<[FileEvent], Never>
    }

    private struct State {
        var events: [FileEvent] = []
        var finished = false
        var waiters: [Int: Waiter] = [:]
        /// Waiters whose deadline passed, or whose task was cancelled, before they were registered.
        var expired: Set<Int> = []
        var lastWaiter = 0
    }

    /// Invariant: a waiter is in `waiters` until it is resumed, exactly once: by `append` when its condition
    /// holds, by `finish`, or by `expire` (deadline or cancellation).
    private let state = Mutex(State())

    /// Starts consuming `stream`; the consumer ends when the stream finishes.
    init(_ stream: AsyncStream<FileEvent>) {
        Task { [self] in
            for await event in stream { self.append(event) }
            self.finish()
        }
    }

    /// Every event so far.
    var all: [FileEvent] { self.state.withLock { $0.events } }

    /// Waits until `condition` holds for the events so far, the stream finishes, `timeout` passes, or the task is
    /// cancelled.
    ///
    /// - Returns: every event so far; the caller asserts on them.
    @discardableResult
    func events(
        until condition: @escaping @Sendable ([FileEvent]) -> Bool,
        timeout: Duration = .seconds(10)
    ) async -> [FileEvent] {
        let id = self.state.withLock { state in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        let deadline = Task {
            guard (try? await Task.sleep(for: timeout)) != nil else { return }
            self.expire(id)
        }
        defer { deadline.cancel() }
        // A test that exceeds its time limit is cancelled: stop waiting then too.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                self.state.withLock { state in
                    if state.finished || state.expired.contains(id) || condition(state.events) {
                        continuation.resume(returning: state.events)
                    } else {
                        state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    }
                }
            }
        } onCancel: {
            self.expire(id)
        }
    }

    /// Waits until one of the events so far matches `predicate`.
    @discardableResult
    func events(
        containing predicate: @escaping @Sendable (FileEvent) -> Bool,
        timeout: Duration = .seconds(10)
    ) async -> [FileEvent] {
        await self.events(until: { $0.contains(where: predicate) }, timeout: timeout)
    }

    /// Waits until the stream finishes (or `timeout` passes).
    ///
    /// - Returns: whether it finished.
    @discardableResult
    func finished(timeout: Duration = .seconds(10)) async -> Bool {
        await self.events(until: { _ in false }, timeout: timeout)
        return self.state.withLock { $0.finished }
    }

    private func append(_ event: FileEvent) {
        self.state.withLock { state in
            state.events.append(event)
            for (id, waiter) in state.waiters where waiter.condition(state.events) {
                state.waiters[id] = nil
                waiter.continuation.resume(returning: state.events)
            }
        }
    }

    private func finish() {
        self.state.withLock { state in
            state.finished = true
            for waiter in state.waiters.values { waiter.continuation.resume(returning: state.events) }
            state.waiters.removeAll()
        }
    }

    private func expire(_ id: Int) {
        self.state.withLock { state in
            if let waiter = state.waiters.removeValue(forKey: id) {
                waiter.continuation.resume(returning: state.events)
            } else {
                state.expired.insert(id)
            }
        }
    }
}
