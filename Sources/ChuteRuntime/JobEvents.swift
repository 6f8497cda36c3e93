import DequeModule
import Synchronization

/// The one stream of ``JobEvent``s: the intake and the job runtime publish, any number of subscribers (the status
/// board, each client of the API's event stream) read.
///
/// Publishing never waits: each subscriber has its own bounded buffer. A subscriber that falls behind loses
/// `progress` events first (the next one says as much); one that falls further behind, past ``hardLimit`` events,
/// is dropped (its sequence ends), so that a stalled reader costs a bounded amount of memory and never a job's time.
///
/// - Important: A `Mutex` rather than an actor: events are published from synchronous code (a worker's progress
///   callback) and in the order they happen, which hops onto an actor would not keep.
package final class JobEvents: Sendable {
    /// Buffered events beyond which `progress` events are dropped for that subscriber.
    package static let progressLimit = 64
    /// Buffered events beyond which a subscriber is dropped.
    package static let hardLimit = 4096

    private let subscribers = Mutex<[Int: Subscription.Buffer]>([:])
    private let nextID = Atomic<Int>(0)

    package init() {}

    /// Sends `event` to every subscriber.
    package func publish(_ event: JobEvent) {
        let dropped: [Subscription.Buffer] = self.subscribers.withLock { subscribers in
            var dropped: [Subscription.Buffer] = []
            for (id, buffer) in subscribers where !buffer.offer(event) {
                subscribers[id] = nil
                dropped.append(buffer)
            }
            return dropped
        }
        for buffer in dropped { buffer.finish() }
    }

    /// A new subscriber: the events published from now on, until `Subscription`'s iteration ends or the subscriber
    /// falls past `limit` events behind.
    ///
    /// - Parameter limit: how many unread events the subscriber may have before it is dropped; the status board,
    ///   which must see every job's end, passes `Int.max` (it still loses progress events when behind).
    package func subscribe(limit: Int = JobEvents.hardLimit) -> Subscription {
        let id = self.nextID.add(1, ordering: .relaxed).newValue
        let buffer = Subscription.Buffer(limit: limit)
        self.subscribers.withLock { $0[id] = buffer }
        return Subscription(buffer: buffer) { [weak self] in
            self?.subscribers.withLock { _ = $0.removeValue(forKey: id) }
        }
    }

    /// How many subscribers there are.
    package var subscriberCount: Int { self.subscribers.withLock { $0.count } }
}

/// The events of one subscriber of ``JobEvents``, as an `AsyncSequence`.
package struct Subscription: AsyncSequence, Sendable {
    package typealias Element = JobEvent

    fileprivate let buffer: Buffer
    private let cancel: Canceller

    fileprivate init(buffer: Buffer, onEnd: @escaping @Sendable () -> Void) {
        self.buffer = buffer
        self.cancel = Canceller(onEnd)
    }

    /// Ends the subscription: its iteration returns `nil` once the buffered events are read.
    package func finish() {
        self.cancel.run()
        self.buffer.finish()
    }

    /// The same events in batches: each is every event buffered when it is asked for, in order (after waiting for
    /// one if there is none). A reader that writes or applies a batch at once keeps up with a burst at a fraction
    /// of the cost of one event at a time.
    package var batches: Batches { Batches(buffer: self.buffer, cancel: self.cancel) }

    package struct Batches: AsyncSequence, Sendable {
        package typealias Element = [JobEvent]

        fileprivate let buffer: Buffer
        fileprivate let cancel: Canceller

        package func makeAsyncIterator() -> Iterator { Iterator(buffer: self.buffer, cancel: self.cancel) }

        package struct Iterator: AsyncIteratorProtocol {
            fileprivate let buffer: Buffer
            fileprivate let cancel: Canceller

            package mutating func next() async -> [JobEvent]? {
                await withTaskCancellationHandler {
                    await self.buffer.takeAll()
                } onCancel: { [cancel, buffer] in
                    cancel.run()
                    buffer.finish()
                }
            }
        }
    }

    package func makeAsyncIterator() -> Iterator {
        Iterator(buffer: self.buffer, cancel: self.cancel)
    }

    package struct Iterator: AsyncIteratorProtocol {
        fileprivate let buffer: Buffer
        fileprivate let cancel: Canceller

        package mutating func next() async -> JobEvent? {
            await withTaskCancellationHandler {
                await self.buffer.take()
            } onCancel: { [cancel, buffer] in
                cancel.run()
                buffer.finish()
            }
        }
    }

    /// Runs its closure once: the subscriber leaves the publisher's list.
    fileprivate final class Canceller: Sendable {
        private let action: Mutex<(@Sendable () -> Void)?>
        init(_ action: @escaping @Sendable () -> Void) { self.action = Mutex(action) }
        func run() {
            self.action.withLock { action in
                defer { action = nil }
                return action
            }?()
        }
    }

    /// One subscriber's queue of events and its waiting reader.
    fileprivate final class Buffer: Sendable {
        private struct State {
            var events = Deque<JobEvent>()
            var reader: CheckedContinuation<JobEvent?, Never>?
            var finished = false
        }

        private let state = Mutex(State())
        private let limit: Int

        init(limit: Int) {
            self.limit = limit
        }

        /// Queues `event`, or drops it when the subscriber is behind and it is only progress.
        ///
        /// - Returns: `false` when the subscriber is past ``JobEvents/hardLimit`` and must be dropped.
        func offer(_ event: JobEvent) -> Bool {
            let (reader, keep): (CheckedContinuation<JobEvent?, Never>?, Bool) = self.state.withLock { state in
                if state.finished { return (nil, false) }
                if let reader = state.reader {
                    state.reader = nil
                    return (reader, true)
                }
                if event.kind == .progress, state.events.count >= JobEvents.progressLimit { return (nil, true) }
                if state.events.count >= self.limit { return (nil, false) }
                state.events.append(event)
                return (nil, true)
            }
            reader?.resume(returning: event)
            return keep
        }

        func take() async -> JobEvent? {
            await withCheckedContinuation { continuation in
                let ready: JobEvent?? = self.state.withLock { state in
                    if !state.events.isEmpty { return .some(state.events.removeFirst()) }
                    if state.finished { return .some(nil) }
                    state.reader = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }

        func takeAll() async -> [JobEvent]? {
            guard let first = await self.take() else { return nil }
            return self.state.withLock { state in
                defer { state.events.removeAll(keepingCapacity: true) }
                return [first] + state.events
            }
        }

        func finish() {
            let reader = self.state.withLock { state in
                state.finished = true
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: nil)
        }
    }
}
