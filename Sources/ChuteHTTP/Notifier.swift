import ChuteCore
import ChuteRuntime
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage

/// The service that sends notifications: reads the job events, and POSTs each job that failed, completed or was
/// cancelled to the `notify:` targets that want that event, and the digest at its time.
///
/// Nothing here ever waits for a job, or makes a job wait: the events are read as they come (the subscription has
/// no limit, like the status board's, and reading one costs a `stat` or two), and each target has its own bounded
/// queue of notifications, sent one at a time by a task of its own, so a target that never answers holds up only its
/// own notifications. A full queue drops the new notification, with a log line. A try that fails (no connection,
/// no answer within ``Policy/timeout``, a 5xx, 408 or 429 status) is retried after 1 s, 2 s, 4 s, 8 s; after
/// ``Policy/tries`` tries the notification is kept in the journal, with a log line naming the URL (without credentials
/// or query) and the status or error, and sent when the target answers again: after its next notification is
/// sent, at each ``Policy/resendInterval``, and at the next start. Any other status gives it up at once (the target
/// refuses it). At shutdown what is not sent yet is dropped.
///
/// The notifier keeps the configuration it started with: a reload that changes a `notify:` list says that it takes
/// effect at the next restart.
///
/// - Important: Only the daemon (the supervisor) sends notifications: workers cannot open network sockets.
package struct Notifier: Service {
    /// How notifications are sent; fixed in the daemon, shortened by tests.
    package struct Policy: Sendable {
        /// How many times a notification is tried.
        package var tries = 5
        /// The wait after the first failed try; it doubles after each.
        package var firstDelay: Duration = .seconds(1)
        /// How long one try may take, connecting included.
        package var timeout: Duration = .seconds(10)
        /// How many notifications may wait for each target.
        package var queueLimit = 256
        /// How often the notifications kept for a target that did not answer are tried again.
        package var resendInterval: Duration = .seconds(60)

        package init() {}
    }

    /// One notification for one target.
    struct Message: Sendable {
        var target: NotifyTarget
        var event: NotifyEvent
        var payload: API.Notification
    }

    /// What a target's sending task does next.
    enum Work: Sendable {
        /// Send a new notification.
        case send(Message)
        /// Try again the notifications kept for the target.
        case resendKept
    }

    /// How one notification's tries ended.
    enum Delivery: Sendable, Equatable {
        /// The target took it (a 2xx status).
        case sent
        /// The target refused it (a status that trying again would not change): given up.
        case refused
        /// No answer, or one that may pass (5xx, 408, 429), after every try.
        case unanswered
        /// The daemon is stopping.
        case stopped
    }

    private let config: ChuteConfig
    private let subscription: Subscription
    private let journal: any JobStore
    private let logger: Logger
    private let policy: Policy
    private let poster: NotificationPoster
    /// Each target's queue: filled from the events and the digest, emptied by the target's sending task.
    private let queues: [NotifyTarget: (stream: AsyncStream<Work>, continuation: AsyncStream<Work>.Continuation)]

    /// Subscribes to `events` at once, so that no event published before ``run()`` is missed.
    ///
    /// - Parameters:
    ///   - config: the `notify:` lists (top-level and per rule) and the digest's schedule.
    ///   - journal: where the digest's counts come from.
    package init(
        config: ChuteConfig,
        events: JobEvents,
        journal: any JobStore,
        logger: Logger,
        policy: Policy = Policy()
    ) {
        self.config = config
        self.subscription = events.subscribe(limit: .max)
        self.journal = journal
        self.logger = logger
        self.policy = policy
        self.poster = NotificationPoster(timeout: policy.timeout)
        var queues: [NotifyTarget: (AsyncStream<Work>, AsyncStream<Work>.Continuation)] = [:]
        for target in config.allNotifyTargets {
            queues[target] = AsyncStream.makeStream(
                of: Work.self,
                bufferingPolicy: .bufferingOldest(policy.queueLimit)
            )
        }
        self.queues = queues
    }

    /// Reads events and sends notifications until graceful shutdown.
    package func run() async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for (target, queue) in self.queues {
                    group.addTask {
                        for await work in queue.stream {
                            switch work {
                            case .send(let message):
                                // A target that takes a notification is back: what it missed follows.
                                if await self.send(message) == .sent { await self.resendKept(to: target) }
                            case .resendKept:
                                await self.resendKept(to: target)
                            }
                        }
                    }
                    group.addTask {
                        // At start, then at each interval: a target that came back with no new notification for it.
                        // A full queue drops this reminder only; the next one comes after the interval.
                        while true {
                            if case .terminated = queue.continuation.yield(.resendKept) { return }
                            do { try await Task.sleep(for: self.policy.resendInterval) } catch { return }
                        }
                    }
                }
                if self.queues.keys.contains(where: { $0.events.contains(.digest) }) {
                    group.addTask { await self.sendDigests() }
                }
                await self.readEvents()
                for queue in self.queues.values { queue.continuation.finish() }
            }
        }
        self.subscription.finish()
    }

    /// Turns each job's end into messages for the targets that want it.
    private func readEvents() async {
        var started: [String: Date] = [:]
        for await event in self.subscription {
            guard let id = event.jobID else { continue }
            let notifyEvent: NotifyEvent
            switch event.kind {
            case .started:
                started[id] = event.time
                continue
            case .completed: notifyEvent = .completed
            case .failed: notifyEvent = .failed
            case .cancelled: notifyEvent = .cancelled
            case .postponed, .vanished:
                started[id] = nil
                continue
            case .queued, .waiting, .progress:
                continue
            }
            let startedAt = started.removeValue(forKey: id)
            let targets = self.config.notifyTargets(forRule: event.rule).filter { $0.events.contains(notifyEvent) }
            guard !targets.isEmpty else { continue }
            let payload = Self.payload(for: event, id: id, startedAt: startedAt)
            for target in targets {
                self.enqueue(Message(target: target, event: notifyEvent, payload: payload))
            }
        }
    }

    /// The webhook body of a job's end: the job as the status API shows it, with sizes and duration.
    static func payload(for event: JobEvent, id: String, startedAt: Date?) -> API.Notification {
        let job = API.Job(
            id: id,
            rule: event.rule,
            source: event.source,
            state: event.kind.rawValue,
            outputs: event.outputs,
            message: event.message,
            code: event.code,
            progress: event.kind == .completed ? 1 : nil,
            startedAt: startedAt,
            endedAt: event.time
        )
        return API.Notification(
            event: event.kind.rawValue,
            job: job,
            sourceSize: (try? SourceInspector.status(of: FilePath(event.source)))?.fingerprint.size,
            outputs: StatusAPI.outputs(event.outputs.map { FilePath($0) }),
            // To the millisecond: `1.701`, not `1.7012126969999999`.
            duration: startedAt.map { (max(0, event.time.timeIntervalSince($0)) * 1000).rounded() / 1000 },
            time: event.time
        )
    }

    /// Queues a message for its target, or drops it with a log line when the target's queue is full.
    private func enqueue(_ message: Message) {
        guard let queue = self.queues[message.target] else { return }
        if case .dropped = queue.continuation.yield(.send(message)) {
            self.logger.warning(
                "Notification dropped: too many are waiting for this URL",
                metadata: self.metadata(message).merging(["queueLimit": "\(self.policy.queueLimit)"]) { $1 }
            )
        }
    }

    /// Sends the digest to each target that wants it, at each time the schedule says, until cancelled.
    private func sendDigests() async {
        let schedule = self.config.settings.digest
        let targets = self.queues.keys.filter { $0.events.contains(.digest) }
        var since: Date?
        while true {
            let due = schedule.next(after: Date())
            do {
                try await Task.sleep(for: .milliseconds(Int64(max(0, due.timeIntervalSinceNow) * 1000)))
            } catch {
                return
            }
            let until = Date()
            let start = since ?? until.addingTimeInterval(-Self.seconds(schedule.period))
            since = until
            let jobs: [JobHistoryEntry]
            do {
                jobs = try await self.journal.history(JobHistoryFilter(since: start, limit: 100_000))
            } catch {
                self.logger.error("Digest not made: the journal cannot be read", error: error)
                continue
            }
            for target in targets {
                let mine = jobs.filter { job in
                    job.updatedAt < until && self.config.notifyTargets(forRule: job.rule).contains(target)
                }
                guard let digest = Self.digest(of: mine, since: start, until: until) else { continue }
                self.enqueue(
                    Message(
                        target: target,
                        event: .digest,
                        payload: API.Notification(event: "digest", digest: digest, time: until)
                    )
                )
            }
        }
    }

    /// The digest of finished jobs, or `nil` when none completed or failed (no empty digest is sent).
    static func digest(of jobs: [JobHistoryEntry], since: Date, until: Date) -> API.Digest? {
        var counts: [String: API.DigestCount] = [:]
        var failures: [API.DigestFailure] = []
        for job in jobs where job.state == "completed" || job.state == "failed" {
            var count = counts[job.rule] ?? API.DigestCount(rule: job.rule, completed: 0, failed: 0)
            if job.state == "completed" {
                count.completed += 1
            } else {
                count.failed += 1
                if failures.count < API.Digest.failureLimit {
                    failures.append(
                        API.DigestFailure(
                            id: job.id,
                            rule: job.rule,
                            source: job.source.string,
                            code: job.failureCode,
                            message: job.failureMessage,
                            time: job.updatedAt
                        )
                    )
                }
            }
            counts[job.rule] = count
        }
        guard !counts.isEmpty else { return nil }
        return API.Digest(
            since: since,
            until: until,
            rules: counts.values.sorted { $0.rule < $1.rule },
            failures: failures
        )
    }

    /// Sends one message, trying again after a back-off while the failure may pass; one that is still not taken after
    /// every try is kept in the journal, for ``resendKept(to:)``.
    private func send(_ message: Message) async -> Delivery {
        let delivery = await self.deliver(message, tries: self.policy.tries)
        guard delivery == .unanswered else { return delivery }
        do {
            try await self.journal.keepNotification(
                kind: message.target.kind.rawValue,
                url: message.target.url,
                event: message.event.rawValue,
                payload: try API.encoder().encode(message.payload)
            )
            self.logger.warning(
                "Notification not taken after every try; kept, and sent when the URL answers again",
                metadata: self.metadata(message).merging(["tries": "\(self.policy.tries)"]) { $1 }
            )
        } catch {
            self.logger.error(
                "Notification given up: it cannot be kept in the journal",
                metadata: self.metadata(message).merging(["error": "\(LogText.escaped("\(error)"))"]) { $1 }
            )
        }
        return delivery
    }

    /// Sends the notifications kept for `target`, the oldest first, one try each, until one is not taken.
    private func resendKept(to target: NotifyTarget) async {
        let kept: [KeptNotification]
        do {
            kept = try await self.journal.keptNotifications(kind: target.kind.rawValue, url: target.url)
        } catch {
            self.logger.error("Kept notifications not sent: the journal cannot be read", error: error)
            return
        }
        for notification in kept {
            guard let event = NotifyEvent(rawValue: notification.event),
                let payload = try? API.decoder().decode(API.Notification.self, from: notification.payload)
            else { continue }
            let message = Message(target: target, event: event, payload: payload)
            switch await self.deliver(message, tries: 1) {
            case .sent, .refused:
                do {
                    try await self.journal.forgetNotification(notification.id)
                } catch {
                    self.logger.error("Cannot update the journal", error: error)
                    return
                }
            case .unanswered, .stopped:
                return
            }
        }
    }

    /// Tries one message up to `tries` times, after a back-off while the failure may pass.
    private func deliver(_ message: Message, tries: Int) async -> Delivery {
        let request = Self.request(for: message)
        var delay = self.policy.firstDelay
        for attempt in 1...tries {
            var metadata = self.metadata(message)
            metadata["try"] = "\(attempt)"
            let transient: Bool
            do {
                let status = try await self.poster.post(
                    message.target.url,
                    headers: request.headers,
                    body: request.body
                )
                if (200..<300).contains(status) {
                    self.logger.info("Notification sent", metadata: metadata.merging(["status": "\(status)"]) { $1 })
                    return .sent
                }
                metadata["status"] = "\(status)"
                transient = status >= 500 || status == 408 || status == 429
            } catch {
                if Task.isCancelled { break }
                metadata["error"] = "\(LogText.escaped("\(error)"))"
                transient = true
            }
            guard transient else {
                self.logger.warning("Notification given up", metadata: metadata)
                return .refused
            }
            guard attempt < tries else {
                self.logger.debug("Notification try failed", metadata: metadata)
                return .unanswered
            }
            metadata["retryIn"] = "\(ValueParsing.describe(delay))"
            self.logger.info("Notification try failed; trying again", metadata: metadata)
            do {
                try await Task.sleep(for: delay)
            } catch {
                break
            }
            delay *= 2
        }
        self.logger.info("Notification not sent: the daemon is stopping", metadata: self.metadata(message))
        return .stopped
    }

    /// What the log says about a message: the URL without credentials or query, the event, the job.
    private func metadata(_ message: Message) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "url": "\(LogText.escaped(message.target.redactedURL))", "event": "\(message.event.rawValue)",
        ]
        if let id = message.payload.job?.id { metadata["job.id"] = "\(id)" }
        return metadata
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

extension Notifier: CustomStringConvertible {
    /// `Notifier(targets: …)`: the service group logs its services at debug level, and the default description would
    /// show every field, the queues included.
    package var description: String {
        "Notifier(targets: \(self.queues.keys.map(\.description).sorted().joined(separator: "; ")))"
    }
}
