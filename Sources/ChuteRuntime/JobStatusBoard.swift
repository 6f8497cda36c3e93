import DequeModule
import Foundation
import ServiceLifecycle

/// The live state of the daemon's jobs, kept from ``JobEvents``: the files waiting to be ready, the queued jobs,
/// the running ones with their progress, and the latest finished ones. The status API reads it; the history of
/// finished jobs beyond the latest is the journal's.
package actor JobStatusBoard: Service {
    /// A job (or a waiting file) as the board knows it.
    package struct Entry: Sendable, Codable, Hashable {
        /// `nil` for a file that is waiting to be ready and has no job yet.
        package var id: String?
        package var rule: String?
        package var source: String
        /// `waiting`, `queued`, `running`, `completed`, `failed`, `postponed`, `cancelled` or `vanished`.
        package var state: String
        package var outputs: [String] = []
        package var message: String?
        package var code: String?
        /// How far a running job is, 0 to 1, when its worker said.
        package var progress: Double?
        package var queuedAt: Date?
        package var startedAt: Date?
        package var endedAt: Date?
        /// When a postponed job's file is tried again.
        package var retryAt: Date?
        /// For a job whose source was moved to its rule's quarantine: where the source is now.
        package var quarantined: String?
        /// For a waiting file that is not ready: when it is taken anyway unless it changes (`incompleteTimeout`).
        package var until: Date?
        /// In the history of a store that agents share: the agent that holds or ran the job.
        package var agent: String?

        package init(
            id: String?,
            rule: String?,
            source: String,
            state: String,
            outputs: [String] = [],
            message: String? = nil,
            code: String? = nil,
            progress: Double? = nil,
            queuedAt: Date? = nil,
            startedAt: Date? = nil,
            endedAt: Date? = nil,
            quarantined: String? = nil,
            until: Date? = nil,
            agent: String? = nil
        ) {
            self.id = id
            self.rule = rule
            self.source = source
            self.state = state
            self.outputs = outputs
            self.message = message
            self.code = code
            self.progress = progress
            self.queuedAt = queuedAt
            self.startedAt = startedAt
            self.endedAt = endedAt
            self.quarantined = quarantined
            self.until = until
            self.agent = agent
        }
    }

    /// How many finished jobs the board keeps.
    package static let recentLimit = 200
    /// How many waiting files the board keeps.
    package static let waitingLimit = 1000

    private let subscription: Subscription
    private var waiting: [String: Entry] = [:]
    /// The queued jobs with the number of their `queued` event, which is their place in ``queueOrder``.
    private var queued: [String: (entry: Entry, number: Int)] = [:]
    /// The queued jobs' ids in the order they were queued, with their numbers: an id whose number is no longer its
    /// entry's left the queue (or came back to it) and is skipped, and dropped once it reaches the front. Listing a
    /// queue of 10,000 jobs in order is then a walk, where sorting it for each request of the API had cost the
    /// daemon a third of its CPU time under 50 clients.
    private var queueOrder = Deque<(id: String, number: Int)>()
    private var queuedSoFar = 0
    private var running: [String: Entry] = [:]
    private var recent: [Entry] = []
    /// The postponed jobs, by source, until their file is queued again, ends otherwise, or is cancelled.
    private var postponed: [String: Entry] = [:]

    /// Subscribes to `events` at once, so that no event published before ``run()`` is missed; with no limit, so
    /// that a burst of thousands of queued files never costs the board a job's end.
    package init(events: JobEvents) {
        self.subscription = events.subscribe(limit: .max)
    }

    /// Reads events until graceful shutdown, a batch of them at a time.
    package nonisolated func run() async {
        for await batch in self.subscription.batches.cancelOnGracefulShutdown() {
            await self.apply(batch)
        }
    }

    /// Takes events into the board, in order.
    package func apply(_ events: [JobEvent]) {
        for event in events { self.apply(event) }
    }

    /// Takes one event into the board.
    package func apply(_ event: JobEvent) {
        guard let id = event.jobID else {
            if event.kind == .waiting {
                if self.waiting.count >= Self.waitingLimit, self.waiting[event.source] == nil,
                    let oldest = self.waiting.values.min(by: {
                        ($0.queuedAt ?? .distantPast) < ($1.queuedAt ?? .distantPast)
                    })
                {
                    self.waiting[oldest.source] = nil
                }
                self.waiting[event.source] = Entry(
                    id: nil,
                    rule: event.rule,
                    source: event.source,
                    state: "waiting",
                    message: event.message,
                    queuedAt: event.time,
                    until: event.until
                )
            }
            return
        }
        if event.kind != .postponed, event.kind != .progress {
            // Anything else that happens to the file ends its wait for the retry.
            self.postponed[event.source] = nil
        }
        switch event.kind {
        case .waiting:
            break
        case .queued:
            self.waiting[event.source] = nil
            self.queuedSoFar += 1
            self.queued[id] = (
                Entry(id: id, rule: event.rule, source: event.source, state: "queued", queuedAt: event.time),
                self.queuedSoFar
            )
            self.queueOrder.append((id, self.queuedSoFar))
        case .started:
            var entry =
                self.dequeue(id) ?? Entry(id: id, rule: event.rule, source: event.source, state: "queued")
            entry.state = "running"
            entry.startedAt = event.time
            self.running[id] = entry
        case .progress:
            self.running[id]?.progress = event.progress
        case .completed, .failed, .postponed, .cancelled, .vanished:
            var entry =
                self.running.removeValue(forKey: id) ?? self.dequeue(id)
                ?? Entry(id: id, rule: event.rule, source: event.source, state: event.kind.rawValue)
            entry.state = event.kind.rawValue
            entry.outputs = event.outputs
            entry.message = event.message
            entry.code = event.code
            entry.endedAt = event.time
            if event.kind == .completed { entry.progress = 1 }
            if event.kind == .postponed {
                entry.retryAt = event.retryAt
                self.postponed[event.source] = entry
            }
            self.recent.insert(entry, at: 0)
            if self.recent.count > Self.recentLimit { self.recent.removeLast() }
        }
    }

    /// How many files wait to be ready: counted, not listed, for the status counts.
    package var waitingCount: Int { self.waiting.count }

    /// How many jobs are queued.
    package var queuedCount: Int { self.queued.count }

    /// How many jobs are postponed, waiting for their file's retry.
    package var postponedCount: Int { self.postponed.count }

    /// The running jobs, the earliest started first.
    package var runningJobs: [Entry] { Self.inOrder(self.running.values, by: \.startedAt) }

    /// Takes job `id` out of the queue; its place in ``queueOrder`` goes when it reaches the front, or when the
    /// order holds more than twice as many places as there are queued jobs.
    private func dequeue(_ id: String) -> Entry? {
        guard let entry = self.queued.removeValue(forKey: id)?.entry else { return nil }
        while let first = self.queueOrder.first, self.queued[first.id]?.number != first.number {
            self.queueOrder.removeFirst()
        }
        if self.queueOrder.count > 2 * self.queued.count + 64 {
            self.queueOrder.removeAll { self.queued[$0.id]?.number != $0.number }
        }
        return entry
    }

    /// A page of the live entries that pass `isIncluded` (all of them when it is `nil`): the running jobs (the
    /// earliest started first), then the queued jobs (in the order they were queued) and the waiting files (the
    /// oldest first), `offset` of them skipped and at most `limit` taken; with how many pass in all. Only the page's
    /// entries are copied, and with no filter only they are looked at, so that a page taken during a burst of 10,000
    /// queued files costs the board little.
    package func liveEntries(
        where isIncluded: (@Sendable (Entry) -> Bool)?,
        offset: Int,
        limit: Int
    ) -> (page: [Entry], total: Int) {
        var page: [Entry] = []
        var passed = 0
        // Whether the page still wants entries; the count of those that pass is known without looking when all do.
        var wanted: Bool { isIncluded != nil || passed < offset + limit }
        func take(_ entry: Entry) {
            guard isIncluded?(entry) ?? true else { return }
            if passed >= offset, page.count < limit { page.append(entry) }
            passed += 1
        }
        if wanted { for entry in Self.inOrder(self.running.values, by: \.startedAt) { take(entry) } }
        for place in self.queueOrder {
            guard wanted else { break }
            if let queued = self.queued[place.id], queued.number == place.number { take(queued.entry) }
        }
        if wanted { for entry in Self.inOrder(self.postponed.values, by: \.retryAt) { take(entry) } }
        if wanted {
            let waiting = isIncluded.map { self.waiting.values.filter($0) } ?? Array(self.waiting.values)
            for entry in Self.inOrder(waiting, by: \.queuedAt) { take(entry) }
        }
        let total =
            isIncluded == nil
            ? self.running.count + self.queued.count + self.postponed.count + self.waiting.count : passed
        return (page, total)
    }

    private static func inOrder(_ entries: some Sequence<Entry>, by time: KeyPath<Entry, Date?>) -> [Entry] {
        entries.sorted { ($0[keyPath: time] ?? .distantPast) < ($1[keyPath: time] ?? .distantPast) }
    }

    /// The latest finished jobs, the latest first.
    package var recentJobs: [Entry] { self.recent }

    /// The job with this id, if the board has it.
    package func entry(_ id: String) -> Entry? {
        self.running[id] ?? self.queued[id]?.entry ?? self.recent.first { $0.id == id }
    }
}
