import ChuteCore
import Foundation
import Logging
import Synchronization
import SystemPackage

/// A file event, as the intake needs it.
package struct IntakeEvent: Sendable, Equatable {
    /// What happened to the file.
    package enum Change: Sendable, Equatable {
        /// Found by a scan, or brought back to be looked at again.
        case appeared
        /// Closed after writing, or renamed into place: its writer says it is done with it. Such a file is taken at
        /// once, without a quiet period, when no process has it open for writing and its structure shows it whole.
        case finished
        /// Deleted or moved away.
        case removed
    }

    package var change: Change
    package var path: FilePath
    package var root: FilePath

    package init(_ change: Change, path: FilePath, root: FilePath) {
        self.change = change
        self.path = path
        self.root = root
    }
}

/// Turns file events into jobs: waits out each file's quiet period, skips what was already handled, asks the rules,
/// and queues the job.
///
/// It remembers, per source path, the fingerprint of the version last handled (converted or failed), so a duplicate
/// event never runs a file twice and a failed file is not retried until it changes. After a restart the same
/// knowledge comes from the ``JobStore``.
///
/// A quiet file that a rule takes must also be ready: no process may still have it open for writing, and its
/// structure must be whole for its type (``SourceInspector/notReady(_:type:)``). Otherwise its quiet period starts
/// again, until `incompleteTimeout` has passed since it was first found not ready; then it is taken anyway, so that a
/// file that will never be whole still gets a clear failed job. An empty file is not ready either: SMB and FTP clients
/// create a file at 0 bytes, then fill it.
///
/// Each job it makes goes through the ``JobSubmitter``; each one that ends comes back through ``jobFinished(_:outcome:)``
/// (``JobCompletions``), while ``SourceDisposer`` applies the rule's `source` policy or `quarantine` to its source.
package actor Intake: JobCompletionSink {
    private var stability = StabilityTracker()
    private var handled: [FilePath: SourceFingerprint] = [:]
    /// The files no rule takes, with the version the log last said so of: it says so once per version.
    private var unmatched: [FilePath: SourceFingerprint] = [:]
    /// The symbolic and hard links skipped, with the version (the link's own `lstat`) the log last said so of: it
    /// says so once per version.
    private var skippedLinks: [FilePath: SourceFingerprint] = [:]
    /// The outputs this run put in place inside watched folders, never taken as new files; each goes when the
    /// watcher says it was removed. (Outputs elsewhere are never seen, so they are not kept.)
    private var produced: Set<FilePath> = []
    private var recheck: Set<FilePath> = []
    /// When each file waiting to be ready was first found not ready.
    private var waitingSince: [FilePath: Duration] = [:]
    /// Files waiting for a marker (a `doneSuffix` file to appear, a `lockSuffix` file to go), with their watched
    /// folder; a change of the marker brings them back.
    private var waitingForMarker: [FilePath: FilePath] = [:]
    /// The watched folders, for their markers and whether they allow hard links.
    private let watches: [FilePath: WatchConfig]
    /// The watched folders' paths.
    package nonisolated var watchedFolders: [FilePath] { Array(self.watches.keys) }
    /// How many times in a row each file's job was postponed by a transient failure, for the back-off.
    private var postponements: [FilePath: Int] = [:]
    /// The last postponed job of each file waiting for its retry, for a cancel on request.
    private var postponed: [FilePath: Job] = [:]
    /// Files postponed by a transient failure, with their back-off; ``consume(_:)`` arms their timers.
    private let retries: AsyncStream<Retry>
    private let retryContinuation: AsyncStream<Retry>.Continuation
    /// Where the sources of jobs an earlier run ended go, when the journal says they are still to be disposed of.
    private let disposer: SourceDisposer
    /// The rules; a reload replaces them.
    private var matcher: RuleMatcher
    /// The rules' output folders, beneath which a file may be one of Chute's own outputs.
    private var outputFolders: [FilePath]
    private let queue: JobQueue
    private let submitter: JobSubmitter
    private let journal: any JobStore
    private let quietPeriod: Duration
    private let incompleteTimeout: Duration
    private let retryDelay: Duration
    private let logger: Logger
    private let events: JobEvents
    /// Its quiet periods, back-offs and waits, and the date rules compare files' times with.
    private let clock: RuntimeClock
    /// What the status API reads without waiting its turn on the intake, which a burst of thousands of files keeps
    /// busy: the rules in force and whether intake is paused. Written only by the intake.
    private struct Published: Sendable {
        var rules: [Rule]
        var isPaused = false
    }

    private let published: Mutex<Published>
    /// The rules in force, for the status API.
    package nonisolated var rules: [Rule] { self.published.withLock { $0.rules } }
    /// Whether intake is paused (the API's pause): files a rule takes wait here instead of the queue.
    package nonisolated var isPaused: Bool { self.published.withLock { $0.isPaused } }
    /// Files taken while intake was paused, with their watched folder; resuming queues them.
    private var held: [FilePath: FilePath] = [:]
    /// The group folders taken (rules with `groupBy: folder`), for the files that arrive in them afterwards.
    private var groups = GroupLedger()
    /// When the watcher last reported a file added, written, renamed or removed in each folder that may be a group's
    /// (a first-level sub-folder of a watched folder, while a rule groups): a group is taken only once its folder as a
    /// whole has been quiet for a quiet period, whatever the files' own times say (kept by `cp -p`, `rsync -t` or
    /// `unzip`, or from a file server's clock).
    private var folderActivity: [FilePath: Duration] = [:]

    /// How long a file whose writer said it is done waits before it is looked at: the closes of one writer that
    /// closes twice in a row (ImageMagick does) make one look, not two.
    static let finishedSettling = Duration.milliseconds(50)

    /// The longest wait before a postponed file is tried again.
    static let maximumRetryDelay = Duration.seconds(600)

    /// A file to look at again after `delay`.
    private struct Retry: Sendable {
        var path: FilePath
        var root: FilePath
        var delay: Duration
    }

    /// - Parameters:
    ///   - submitter: where the jobs it makes go (the store records them, the queue runs them).
    ///   - disposer: what moves, deletes or quarantines the sources of jobs an earlier run ended.
    ///   - events: where the `waiting` and `queued` events of files go.
    ///   - clock: its time (``RuntimeClock/system`` but in tests).
    package init(
        config: ChuteConfig,
        queue: JobQueue,
        submitter: JobSubmitter,
        disposer: SourceDisposer,
        journal: any JobStore,
        logger: Logger,
        events: JobEvents = JobEvents(),
        clock: RuntimeClock = .system
    ) {
        self.clock = clock
        self.matcher = RuleMatcher(config: config)
        self.outputFolders = config.rules.map(\.output)
        self.published = Mutex(Published(rules: config.rules))
        self.events = events
        self.watches = Dictionary(config.watches.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        self.queue = queue
        self.submitter = submitter
        self.disposer = disposer
        self.quietPeriod = config.settings.quietPeriod
        self.incompleteTimeout = config.settings.incompleteTimeout
        self.retryDelay = config.settings.retryDelay
        (self.retries, self.retryContinuation) = AsyncStream.makeStream(of: Retry.self, bufferingPolicy: .unbounded)
        self.journal = journal
        self.logger = logger
    }

    /// Takes the rules of a reloaded configuration for every file decided from now on; jobs already queued or
    /// running keep the plan they were given.
    ///
    /// - Parameter config: the new rules, with the watches and settings the intake was made with (they change only
    ///   at a restart).
    package func reload(_ config: ChuteConfig) {
        self.matcher = RuleMatcher(config: config)
        self.outputFolders = config.rules.map(\.output)
        self.unmatched = [:]
        self.published.withLock { $0.rules = config.rules }
    }

    /// Stops queueing jobs: files that rules take are held until ``resume()``; queued and running jobs go on.
    package func pause() {
        self.published.withLock { $0.isPaused = true }
    }

    /// Queues again the files held while paused (each is looked at anew first).
    package func resume() {
        self.published.withLock { $0.isPaused = false }
        for (path, root) in self.held {
            self.retryContinuation.yield(Retry(path: path, root: root, delay: .zero))
        }
        self.held = [:]
    }

    /// How many entries each of the intake's per-file memories holds, by name: what it knows of files must go when
    /// the files go, or a daemon that sees millions of files in its life would keep them all.
    package var remembered: [String: Int] {
        [
            "handled": self.handled.count, "unmatched": self.unmatched.count, "skippedLinks": self.skippedLinks.count,
            "produced": self.produced.count, "recheck": self.recheck.count, "waitingSince": self.waitingSince.count,
            "waitingForMarker": self.waitingForMarker.count, "postponements": self.postponements.count,
            "postponed": self.postponed.count, "held": self.held.count, "quietPeriods": self.stability.pendingCount,
        ]
    }

    /// Why a file cannot be taken on request.
    package enum RequestRefusal: Error, Equatable {
        /// The path is not beneath a watched folder (or goes through a symbolic link or `..`).
        case outsideWatchedFolders
        /// The file is not there (any more), or is not a regular file.
        case notAFile
        /// The file is a hard link (it has more names than this one), and its watch does not set `allowHardLinks`.
        case hardLink(links: Int)
    }

    /// Looks at a file beneath a watched folder now, as if it had just been written: the API's "queue this path"
    /// and "retry this job". A file already handled in this version is taken again only when `again` is set.
    ///
    /// - Throws: ``RequestRefusal`` for a path outside the watched folders or that is not a regular file there.
    package func take(_ path: FilePath, again: Bool) throws(RequestRefusal) {
        let root = try self.check(path)
        if again { self.handled[path] = nil }
        self.retryContinuation.yield(Retry(path: path, root: root, delay: .zero))
    }

    /// The watched folder of a file that ``take(_:again:)`` would take.
    ///
    /// - Throws: ``RequestRefusal`` for a path outside the watched folders or that is not a regular file there.
    @discardableResult
    package func check(_ path: FilePath) throws(RequestRefusal) -> FilePath {
        guard path.isAbsolute, !path.components.contains(where: { $0.kind != .regular }),
            let root = self.matcher.root(containing: path)
        else { throw .outsideWatchedFolders }
        guard let status = try? SourceInspector.status(of: path, beneath: root), status.isRegularFile else {
            throw .notAFile
        }
        guard status.linkCount <= 1 || self.watches[root]?.allowHardLinks == true else {
            throw .hardLink(links: status.linkCount)
        }
        return root
    }

    /// The job of a file that another agent found and offered to the queue they share, for an agent that watches no
    /// folder (``JobClaims``): made as this intake would make it, with the claim's id.
    ///
    /// - Returns: `nil` when the file is not in a folder of this agent's watches, not there at the version that was
    ///   offered, or no longer taken by that rule (or taken as a group's).
    package func job(for claim: SharedClaim) async -> Job? {
        guard let root = claim.root else { return nil }
        return await self.job(for: claim, reading: claim.source, beneath: root)
    }

    /// The job of a file that another agent found, whose folder this agent cannot see, run on the copy fetched from
    /// that agent (``HandoffFetcher``); as ``job(for:)``.
    package func job(for claim: SharedClaim, handoff: Handoff) async -> Job? {
        var job = await self.job(for: claim, reading: handoff.copy, beneath: handoff.folder)
        job?.handoff = handoff
        return job
    }

    /// The job of a claim, its file read at `path` beneath `folder`.
    private func job(for claim: SharedClaim, reading path: FilePath, beneath folder: FilePath) async -> Job? {
        guard let root = claim.root, let watch = self.watches[root],
            let status = try? SourceInspector.status(of: path, beneath: folder), status.isRegularFile,
            status.fingerprint.size == claim.size,
            status.fingerprint.modifiedNanoseconds == claim.modifiedNanoseconds
        else { return nil }
        let sniffed = await Blocking.run { SourceInspector.sniff(path, beneath: folder) }
        let facts = FileFacts(size: status.fingerprint.size, modified: status.fingerprint.modified, sniffed: sniffed)
        let now = self.clock.date()
        guard
            case .matched(let rule, let plan, _) = self.matcher.decide(
                path: claim.source,
                root: root,
                facts: facts,
                now: now,
                date: now
            ), rule.name == claim.rule, rule.grouping != .folder
        else { return nil }
        return Job(
            id: claim.id,
            source: claim.source,
            root: root,
            rule: rule,
            plan: plan,
            fingerprint: status.fingerprint,
            sniffed: sniffed,
            doneMarker: watch.doneMarker(of: claim.source),
            allowsHardLinks: watch.allowHardLinks
        )
    }

    /// Takes a job out of the queue on request; the same version of its file is not taken again.
    ///
    /// - Returns: the job, or `nil` when it is not queued.
    package func withdraw(_ jobID: String) async -> Job? {
        guard let job = await self.submitter.withdraw(jobID) else { return nil }
        self.handled[job.source] = job.fingerprint
        self.events.publish(JobEvent(.cancelled, of: job, message: JobSubmitter.withdrawal.message))
        self.logger.info(
            "Queued job cancelled on request",
            metadata: ["job.id": "\(job.id)", "input.path": "\(LogText.escaped(job.source))"]
        )
        return job
    }

    /// Consumes events until the sequence ends, arming one quiet-period timer per event, brings back the files
    /// whose jobs were postponed once their back-off is over, and disposes of the sources of ended jobs once they
    /// have been left alone.
    ///
    /// Timers still running when the sequence ends are cancelled: those files are found again at the next start,
    /// where the journal's record of their job disposes of them.
    nonisolated package func consume(_ events: some AsyncSequence<IntakeEvent, Never>) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { retries in
                    for await retry in self.retries {
                        retries.addTask {
                            do { try await self.clock.sleep(retry.delay) } catch { return }
                            await self.retrying(retry.path)
                            let event = IntakeEvent(.appeared, path: retry.path, root: retry.root)
                            for (ticket, delay) in await self.observe(event) {
                                await self.follow(ticket, after: delay)
                            }
                        }
                    }
                }
            }
            for await event in events {
                for (ticket, delay) in await self.observe(event, fromWatcher: true) {
                    group.addTask { await self.follow(ticket, after: delay) }
                }
            }
            group.cancelAll()
        }
    }

    /// A file's retry is due: its postponed job, if any, is no longer waiting to be cancelled.
    private func retrying(_ path: FilePath) {
        self.postponed[path] = nil
    }

    /// Waits out a file's quiet period, and the next ones while it keeps changing or is not ready, then takes it.
    private nonisolated func follow(_ ticket: StabilityTracker.Ticket, after delay: Duration) async {
        var ticket = ticket
        var delay = delay
        while true {
            do { try await self.clock.sleep(delay) } catch { return }
            guard let next = await self.settle(ticket) else { return }
            (ticket, delay) = next
        }
    }

    /// Records that a job ended, so its source is not taken again until it changes.
    ///
    /// - Returns: for a postponed job, when its file is tried again.
    @discardableResult
    package func jobFinished(_ job: Job, outcome: JobOutcome) async -> Date? {
        if job.isGroup {
            return await self.groupFinished(job, outcome: outcome)
        }
        var retryAt: Date?
        switch outcome {
        case .completed(let output, let others):
            self.handled[job.source] = job.fingerprint
            self.noteProduced([output] + others)
            self.postponements[job.source] = nil
        case .skipped, .failed, .cancelledOnRequest:
            self.handled[job.source] = job.fingerprint
            self.postponements[job.source] = nil
        case .postponed:
            // retryDelay, doubled at each postponement in a row, at most maximumRetryDelay.
            let count = self.postponements[job.source, default: 0]
            self.postponements[job.source] = count + 1
            let delay = min(self.retryDelay * (1 << min(count, 16)), Self.maximumRetryDelay)
            self.logger.info(
                "Trying the file again later",
                metadata: ["input.path": "\(LogText.escaped(job.source))", "delay": "\(delay)"]
            )
            self.postponed[job.source] = job
            self.retryContinuation.yield(Retry(path: job.source, root: job.root, delay: delay))
            retryAt = self.clock.date() + TimeInterval(delay.components.seconds)
        case .cancelled, .vanished, .handedOver:
            break
        }
        if self.recheck.remove(job.source) != nil {
            for (ticket, _) in self.observe(IntakeEvent(.appeared, path: job.source, root: job.root)) {
                _ = await self.settle(ticket)
            }
        }
        return retryAt
    }

    /// Cancels a postponed job on request: its file is not tried again in this version (a new version is taken as a
    /// new file), and the journal records the job as cancelled, so that a restart does not take it either.
    ///
    /// - Returns: the job, or `nil` when no postponed job has this id.
    package func cancelPostponed(_ jobID: String) async -> Job? {
        guard let job = self.postponed.values.first(where: { $0.id == jobID }) else { return nil }
        self.postponed[job.source] = nil
        self.postponements[job.source] = nil
        self.handled[job.source] = job.fingerprint
        let reason = ConversionFailure(.cancelled, "cancelled on request while postponed")
        do {
            try await self.journal.begin(job)
            try await self.journal.cancel(job.id, reason: reason, sidecar: nil)
        } catch {
            self.logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
        self.events.publish(JobEvent(.cancelled, of: job, message: reason.message))
        self.logger.info(
            "Postponed job cancelled on request",
            metadata: ["job.id": "\(job.id)", "input.path": "\(LogText.escaped(job.source.string))"]
        )
        return job
    }

    /// Starts or restarts the quiet period of the file an event is about, and of the files waiting for a marker that
    /// the event creates or removes.
    ///
    /// - Parameter fromWatcher: whether the watcher reported the event (not a file brought back to be looked at
    ///   again): it then counts as activity in the file's group folder.
    private func observe(_ event: IntakeEvent, fromWatcher: Bool = false) -> [(StabilityTracker.Ticket, Duration)] {
        if fromWatcher, self.matcher.hasGroupingRule,
            let folder = RuleMatcher.groupFolder(of: event.path, root: event.root)
        {
            self.noteActivity(in: folder)
        }
        var tickets: [(StabilityTracker.Ticket, Duration)] = []
        if let watch = self.watches[event.root], let marked = watch.markedFile(by: event.path) {
            let folder = event.path.removingLastComponent()
            let released = self.waitingForMarker.filter { path, _ in
                marked.isFolderLock ? path.removingLastComponent() == folder : path == marked.file
            }
            for (path, root) in released {
                self.waitingForMarker[path] = nil
                let fingerprint = (try? SourceInspector.status(of: path, beneath: root))?.fingerprint
                tickets.append((self.stability.touch(path, root: root, fingerprint: fingerprint), self.quietPeriod))
            }
        }
        switch event.change {
        case .removed:
            self.stability.forget(event.path)
            self.produced.remove(event.path)
            // The journal still knows the version handled; a file that comes back is looked up there.
            self.handled[event.path] = nil
            self.postponements[event.path] = nil
            self.unmatched[event.path] = nil
            self.skippedLinks[event.path] = nil
            self.waitingSince[event.path] = nil
            self.waitingForMarker[event.path] = nil
        case .appeared, .finished:
            guard !self.produced.contains(event.path) else { break }
            let fingerprint = (try? SourceInspector.status(of: event.path, beneath: event.root))?.fingerprint
            let finished = event.change == .finished
            let ticket = self.stability.touch(
                event.path,
                root: event.root,
                fingerprint: fingerprint,
                finished: finished
            )
            tickets.append((ticket, finished ? min(self.quietPeriod, Self.finishedSettling) : self.quietPeriod))
        }
        return tickets
    }

    /// Remembers the outputs that landed inside a watched folder, where the watcher will see them.
    private func noteProduced(_ outputs: [FilePath]) {
        let watched = self.watchedFolders
        self.produced.formUnion(outputs.filter { output in watched.contains { output.starts(with: $0) } })
    }

    /// The `incompleteTimeout` of a watched folder: its watch entry's, else the setting's.
    private func incompleteTimeout(of root: FilePath) -> Duration {
        self.watches[root]?.incompleteTimeout ?? self.incompleteTimeout
    }

    /// Records that something changed in a folder that may be a group's now; forgets the folders quiet for longer
    /// than a quiet period once there are many, so that a tree of thousands of folders does not keep them all.
    private func noteActivity(in folder: FilePath) {
        let now = self.clock.now()
        if self.folderActivity.count >= Self.folderActivityLimit {
            self.folderActivity = self.folderActivity.filter { now - $0.value < self.quietPeriod }
        }
        self.folderActivity[folder] = now
    }

    /// How many folders ``folderActivity`` keeps before it forgets the quiet ones.
    static let folderActivityLimit = 1000

    /// Whether a file found not ready may wait on: its folder's `incompleteTimeout` has not passed since it was first
    /// found so. The wait is logged with its reason and until when, at the info level the first time, so that a file
    /// that seems ignored says why and until when at most, and at the debug level at each check after.
    ///
    /// - Returns: when the file is taken anyway unless it changes, or `nil` when it may not wait any more.
    private func mayWait(
        _ path: FilePath,
        root: FilePath,
        reason: String,
        _ message: Logger.Message,
        logger: Logger
    ) -> Date? {
        let now = self.clock.now()
        let first = self.waitingSince[path] == nil
        let since = self.waitingSince[path] ?? now
        let timeout = self.incompleteTimeout(of: root)
        guard now - since < timeout else { return nil }
        self.waitingSince[path] = since
        let until = self.clock.date() + (timeout - (now - since)) / .seconds(1)
        logger.log(
            level: first ? .info : .debug,
            message,
            metadata: [
                "reason": "\(LogText.escaped(reason))",
                "incompleteTimeout": "\(ValueParsing.describe(timeout))",
                "until": "\(LogText.localTime(until))",
            ]
        )
        return until
    }

    /// Ends a quiet period; returns a new ticket and delay when the file must wait again.
    private func settle(_ ticket: StabilityTracker.Ticket) async -> (StabilityTracker.Ticket, Duration)? {
        let path = ticket.path
        let status: SourceInspector.Status
        do {
            status = try SourceInspector.status(of: path, beneath: self.matcher.root(containing: path))
        } catch {
            if [.tooManySymbolicLinkLevels, .improperLink, .notDirectory].contains(error),
                let link = try? SourceInspector.status(of: path),
                self.skippedLinks.updateValue(link.fingerprint, forKey: path) != link.fingerprint
            {
                self.logger.info(
                    "Skipped: its path goes through a symbolic link, which is not followed",
                    metadata: ["input.path": "\(LogText.escaped(path))"]
                )
            }
            self.stability.forget(path)
            return nil
        }
        switch self.stability.settle(ticket, fingerprint: status.fingerprint) {
        case .stale:
            return nil
        case .changed(let newTicket):
            return (newTicket, self.quietPeriod)
        case .quiet(let root):
            return await self.evaluate(path, root: root, status: status, finished: ticket.finished)
        }
    }

    /// Decides what to do with a file that is quiet, or whose writer said it is done (`finished`): queue its job,
    /// wait (for a marker, minAge, or until it is ready), or leave it.
    private func evaluate(
        _ path: FilePath,
        root: FilePath,
        status: SourceInspector.Status,
        finished: Bool
    ) async -> (StabilityTracker.Ticket, Duration)? {
        var logger = self.logger
        logger[metadataKey: "input.path"] = "\(LogText.escaped(path))"
        guard status.isRegularFile else {
            // A group folder comes back here when its marker appears, or when its job is tried again.
            if status.isDirectory, path.removingLastComponent() == root {
                return await self.evaluateGroups(in: path, root: root, trigger: path)
            }
            if !status.isSymbolicLink {
                logger.info("Skipped: not a regular file")
            } else if self.skippedLinks.updateValue(status.fingerprint, forKey: path) != status.fingerprint {
                logger.info("Skipped: a symbolic link, which is not followed")
            }
            return nil
        }
        // A second name for a file that may lie outside the watched folder: refused before anything reads it.
        guard status.linkCount <= 1 || self.watches[root]?.allowHardLinks == true else {
            if self.skippedLinks.updateValue(status.fingerprint, forKey: path) != status.fingerprint {
                logger.info(
                    "Skipped: a hard link; the watch's allowHardLinks takes such files",
                    metadata: ["links": "\(status.linkCount)"]
                )
            } else {
                logger.debug("Skipped: a hard link, as before")
            }
            return nil
        }
        if self.handled[path] == status.fingerprint { return nil }
        if await self.isOwnOutput(path, inode: status.fingerprint.inode, logger: logger) {
            logger.debug("Skipped: an output Chute wrote, never taken as a new file")
            return nil
        }
        if await self.queue.isActive(path) {
            self.recheck.insert(path)
            return nil
        }
        let sniffed = await Blocking.run { SourceInspector.sniff(path, beneath: root) }
        let facts = FileFacts(size: status.fingerprint.size, modified: status.fingerprint.modified, sniffed: sniffed)
        let now = self.clock.date()
        let decision = self.matcher.decide(
            path: path,
            root: root,
            facts: facts,
            now: now,
            date: now
        )
        switch decision {
        case .ignored(let reason):
            logger.debug("Ignored", metadata: ["reason": "\(LogText.escaped(reason))"])
        case .noRule:
            // A file dropped in that nothing converts would otherwise leave no trace at the default level.
            if self.unmatched.updateValue(status.fingerprint, forKey: path) != status.fingerprint {
                logger.info("No rule matches; the file is left alone (chute explain says why)")
            } else {
                logger.debug("No rule matches, as before")
            }
        case .filtered(let reasons):
            logger.debug("Filtered out", metadata: ["reasons": "\(LogText.escaped(reasons.joined(separator: "; ")))"])
        case .notYet(let rule, let after):
            logger.debug("Waiting for minAge", metadata: ["rule.name": "\(rule)"])
            return (self.stability.touch(path, root: root, fingerprint: status.fingerprint), after)
        case .matched(let rule, _, _) where rule.grouping == .folder:
            guard let folder = RuleMatcher.groupFolder(of: path, root: root) else { return nil }
            return await self.evaluateGroups(in: folder, root: root, trigger: path)
        case .matched(let rule, let plan, _):
            var job = Job(
                source: path,
                root: root,
                rule: rule,
                plan: plan,
                fingerprint: status.fingerprint,
                sniffed: sniffed,
                doneMarker: self.watches[root]?.doneMarker(of: path),
                allowsHardLinks: self.watches[root]?.allowHardLinks == true
            )
            job.attempt = self.postponements[path, default: 0] + 1
            if let earlier = await self.earlierOutcome(path, fingerprint: status.fingerprint, logger: logger) {
                self.handled[path] = status.fingerprint
                logger.debug("Already handled before a restart", metadata: ["rule.name": "\(rule.name)"])
                await self.disposer.afterRestart(job, earlier)
                return nil
            }
            if let watch = self.watches[root],
                let reason = watch.markerWait(for: path, exists: { SystemCall.access($0, F_OK) == 0 })
            {
                // Checked and recorded with no suspension between, so a marker event cannot slip in unseen.
                self.waitingForMarker[path] = root
                logger.debug("Waiting for a marker", metadata: ["reason": "\(LogText.escaped(reason))"])
                self.events.publish(JobEvent(.waiting, jobID: nil, rule: rule.name, source: path, message: reason))
                return nil
            }
            if finished {
                // Taken without a quiet period only on the kernel's word that nobody writes it and a whole structure;
                // anything less waits for the quiet period and the checks below.
                guard await Blocking.run({ SourceInspector.isFinished(path, type: sniffed, beneath: root) }) else {
                    return (self.stability.touch(path, root: root, fingerprint: status.fingerprint), self.quietPeriod)
                }
                logger.debug("Taken at once: closed by its writer, open for writing nowhere, and whole")
            } else if let reason = await Blocking.run({ SourceInspector.notReady(path, type: sniffed, beneath: root) })
            {
                if let until = self.mayWait(
                    path,
                    root: root,
                    reason: reason,
                    "Waiting until the file is ready",
                    logger: logger
                ) {
                    var event = JobEvent(.waiting, jobID: nil, rule: rule.name, source: path, message: reason)
                    event.until = until
                    self.events.publish(event)
                    return (self.stability.touch(path, root: root, fingerprint: status.fingerprint), self.quietPeriod)
                }
                logger.warning(
                    "Taking a file that is still not ready after incompleteTimeout",
                    metadata: ["reason": "\(LogText.escaped(reason))"]
                )
            }
            // The checks above read the file as it was then; a writer that appended its last chunk while they ran
            // left the job's fingerprint behind: such a file waits a quiet period more, as any file just written.
            if let now = try? SourceInspector.status(of: path, beneath: root), now.fingerprint != status.fingerprint {
                logger.debug("Written to while it was checked; waiting for it to be quiet again")
                return (self.stability.touch(path, root: root, fingerprint: now.fingerprint), self.quietPeriod)
            }
            self.waitingSince[path] = nil
            await self.removeStaleReasons(of: path, fingerprint: status.fingerprint, logger: logger)
            if self.isPaused {
                self.held[path] = root
                logger.debug("Intake paused; the file is held until it resumes")
                return nil
            }
            if await self.submitter.submit(job) != nil {
                logger.debug("Job queued", metadata: ["job.id": "\(job.id)", "rule.name": "\(rule.name)"])
            }
        }
        return nil
    }

    /// Removes the reason files (`NAME.reason.txt`) that quarantine left for this file when it was moved back out of
    /// quarantine: nothing is left at the quarantined path recorded for its path or its inode.
    private func removeStaleReasons(of path: FilePath, fingerprint: SourceFingerprint, logger: Logger) async {
        do {
            for moved in try await self.journal.leftQuarantine(path, fingerprint: fingerprint) {
                let reason = SourceDisposal.reasonPath(of: moved)
                if unlink(reason.string) == 0 {
                    logger.info(
                        "Removed the reason file of a file moved back out of quarantine",
                        metadata: ["path": "\(LogText.escaped(reason.string))"]
                    )
                }
            }
        } catch {
            logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
    }

    /// Whether a file is one of Chute's own outputs, which are never taken as new files: one this run put in place,
    /// or, for a file beneath a rule's output folder, one the journal records (it records an output's inode before
    /// the output is renamed into place, so that even an output whose job is still being committed is known).
    ///
    /// A journal that cannot be read is logged and the file is taken as any other.
    private func isOwnOutput(_ path: FilePath, inode: UInt64, logger: Logger) async -> Bool {
        if self.produced.contains(path) { return true }
        guard self.outputFolders.contains(where: { path.starts(with: $0) }) else { return false }
        do {
            return try await self.journal.isOutput(path, inode: inode)
        } catch {
            logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return false
        }
    }

    /// The completed or failed job the journal records for this version of the source.
    ///
    /// A journal that cannot be read is logged and the file is taken: a second output beats a lost one.
    private func earlierOutcome(
        _ path: FilePath,
        fingerprint: SourceFingerprint,
        logger: Logger
    ) async -> StoredOutcome? {
        do {
            return try await self.journal.outcome(of: path, fingerprint: fingerprint)
        } catch {
            logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return nil
        }
    }
}

// MARK: - Groups

extension Intake {
    /// Looks at a group folder (rules with `groupBy: folder`) after one of its files, or the folder itself, was
    /// quiet: each rule's group is taken once every file it matches is quiet and ready, the folder's `doneSuffix`
    /// marker (`scans.done` beside `scans`) is there when the watch has a `doneSuffix`, and nothing was added to the
    /// folder for a quiet period. A file found in a group already taken is reported, and starts no job.
    ///
    /// - Returns: a ticket and delay when the group must be looked at again (a file not ready, a folder that just
    ///   changed); `nil` when a file still in its quiet period will bring it back, or when it was taken.
    private func evaluateGroups(
        in folder: FilePath,
        root: FilePath,
        trigger: FilePath
    ) async -> (StabilityTracker.Ticket, Duration)? {
        var logger = self.logger
        logger[metadataKey: "group.path"] = "\(LogText.escaped(folder))"
        guard let folderStatus = try? SourceInspector.status(of: folder, beneath: root), folderStatus.isDirectory
        else { return nil }
        let matcher = self.matcher
        let allowsHardLinks = self.watches[root]?.allowHardLinks == true
        let now = self.clock.date()
        let candidates = await Blocking.run {
            GroupListing.candidates(
                in: folder,
                root: root,
                matcher: matcher,
                allowsHardLinks: allowsHardLinks,
                now: now
            )
        }
        let byRule = Dictionary(grouping: candidates, by: \.rule.name)
        for name in byRule.keys.sorted() {
            guard let files = byRule[name] else { continue }
            let key = GroupKey(
                folder: folder,
                device: folderStatus.fingerprint.device,
                inode: folderStatus.fingerprint.inode,
                rule: name
            )
            if let wait = await self.evaluateGroup(key, files: files, root: root, trigger: trigger, logger: logger) {
                return wait
            }
        }
        return nil
    }

    /// Takes one rule's group of a folder when it is complete (``evaluateGroups(in:root:trigger:)``).
    private func evaluateGroup(
        _ key: GroupKey,
        files: [GroupListing.Candidate],
        root: FilePath,
        trigger: FilePath,
        logger: Logger
    ) async -> (StabilityTracker.Ticket, Duration)? {
        var logger = logger
        logger[metadataKey: "rule.name"] = "\(key.rule)"
        if self.groups.job(of: key) == nil {
            // After a restart, the journal knows the groups taken before.
            do {
                if let record = try await self.journal.groupOutcome(
                    of: key.folder,
                    device: key.device,
                    inode: key.inode,
                    rule: key.rule
                ), self.groups.job(of: key) == nil {
                    self.groups.record(key, jobID: record.jobID, members: record.members)
                    for member in record.members { self.handled[member.path] = member.fingerprint }
                    logger.debug("Group already handled before a restart", metadata: ["job.id": "\(record.jobID)"])
                }
            } catch {
                logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
        }
        if let taken = self.groups.job(of: key) {
            self.reportLate(files, in: key, jobID: taken.jobID, logger: logger)
            return nil
        }
        // A file still in its quiet period brings the group back when it ends.
        if files.contains(where: { self.stability.isPending($0.path) }) { return nil }
        if let watch = self.watches[root],
            let reason = watch.markerWait(for: key.folder, exists: { SystemCall.access($0, F_OK) == 0 })
        {
            // Checked and recorded with no suspension between, so a marker event cannot slip in unseen.
            self.waitingForMarker[key.folder] = root
            logger.debug("Group waiting for a marker", metadata: ["reason": "\(LogText.escaped(reason))"])
            self.events.publish(JobEvent(.waiting, jobID: nil, rule: key.rule, source: key.folder, message: reason))
            return nil
        }
        for file in files {
            let (path, type) = (file.path, file.sniffed)
            guard let reason = await Blocking.run({ SourceInspector.notReady(path, type: type, beneath: root) }) else {
                self.waitingSince[path] = nil
                continue
            }
            var fileLogger = logger
            fileLogger[metadataKey: "input.path"] = "\(LogText.escaped(path))"
            if let until = self.mayWait(
                path,
                root: root,
                reason: reason,
                "Group waiting until a file is ready",
                logger: fileLogger
            ) {
                var event = JobEvent(.waiting, jobID: nil, rule: key.rule, source: key.folder, message: reason)
                event.until = until
                self.events.publish(event)
                return (self.stability.touch(path, root: root, fingerprint: file.status.fingerprint), self.quietPeriod)
            }
            logger.warning(
                "Taking a group whose file is still not ready after incompleteTimeout",
                metadata: ["input.path": "\(LogText.escaped(path))", "reason": "\(LogText.escaped(reason))"]
            )
        }
        // Nothing added, removed or written in the folder for a quiet period, by the watcher's events (a scanner that
        // pauses between pages) and by the files' and folder's times (`cp -r` may still be adding files that no event
        // has reported yet).
        var times = files.map { $0.status.fingerprint.modified }
        if let folder = try? SourceInspector.status(of: key.folder, beneath: root) {
            times.append(folder.fingerprint.modified)
        }
        var wait = Duration.zero
        if let newest = times.max() {
            wait = self.quietPeriod - .milliseconds(Int64(self.clock.date().timeIntervalSince(newest) * 1000))
        }
        if let last = self.folderActivity[key.folder] {
            wait = max(wait, self.quietPeriod - (self.clock.now() - last))
        }
        if wait > .zero {
            logger.debug(
                "Group waiting until its folder has been quiet",
                metadata: [
                    "delay": "\(ValueParsing.describe(.milliseconds(Int64((wait / .milliseconds(1)).rounded()))))",
                    "quietPeriod": "\(ValueParsing.describe(self.quietPeriod))",
                ]
            )
            let fingerprint = (try? SourceInspector.status(of: trigger, beneath: root))?.fingerprint
            return (self.stability.touch(trigger, root: root, fingerprint: fingerprint), wait + .milliseconds(1))
        }
        // Re-checked after the suspensions above: another file's settling may have taken the group meanwhile.
        if let taken = self.groups.job(of: key) {
            self.reportLate(files, in: key, jobID: taken.jobID, logger: logger)
            return nil
        }
        if files.contains(where: { self.stability.isPending($0.path) }) { return nil }
        guard let first = files.first else { return nil }
        let ordered = GroupListing.ordered(files, below: key.folder)
        let members = ordered.map {
            GroupMember(path: $0.path, fingerprint: $0.status.fingerprint, sniffed: $0.sniffed)
        }
        if self.isPaused {
            self.held[key.folder] = root
            logger.debug("Intake paused; the group is held until it resumes")
            return nil
        }
        var job = Job(
            source: key.folder,
            root: root,
            rule: first.rule,
            plan: RuleMatcher.groupPlan(
                rule: first.rule,
                folder: key.folder,
                date: self.clock.date(),
                firstModified: members.first?.fingerprint.modified ?? self.clock.date()
            ),
            fingerprint: SourceFingerprint(
                device: key.device,
                inode: key.inode,
                size: members.reduce(0) { $0 + $1.fingerprint.size },
                modifiedNanoseconds: members.map(\.fingerprint.modifiedNanoseconds).max() ?? 0
            ),
            sniffed: ordered.first?.sniffed,
            doneMarker: self.watches[root]?.doneMarker(of: key.folder),
            allowsHardLinks: self.watches[root]?.allowHardLinks == true
        )
        job.attempt = self.postponements[key.folder, default: 0] + 1
        job.members = members
        self.groups.record(key, jobID: job.id, members: members)
        self.folderActivity[key.folder] = nil
        for member in members {
            self.handled[member.path] = member.fingerprint
            self.waitingSince[member.path] = nil
        }
        if await self.submitter.submit(job) != nil {
            logger.info(
                "Group queued",
                metadata: ["job.id": "\(job.id)", "group.files": "\(members.count)"]
            )
        } else {
            self.releaseGroup(job)
        }
        return nil
    }

    /// Logs each file of a taken group that its job did not take, once per version.
    private func reportLate(_ files: [GroupListing.Candidate], in key: GroupKey, jobID: String, logger: Logger) {
        for file in files where self.groups.reportsLate(file.path, fingerprint: file.status.fingerprint, in: key) {
            self.handled[file.path] = file.status.fingerprint
            logger.warning(
                "A file arrived in a group already taken; it starts no job of its own",
                metadata: ["input.path": "\(LogText.escaped(file.path))", "job.id": "\(jobID)"]
            )
        }
    }

    /// Forgets that a group was taken, so that its folder is looked at anew.
    private func releaseGroup(_ job: Job) {
        self.groups.release(GroupKey(of: job))
        for member in job.members where self.handled[member.path] == member.fingerprint {
            self.handled[member.path] = nil
        }
    }

    /// Records that a group job ended: a completed group's files are moved or deleted as its rule says, a group
    /// postponed is looked at again after its back-off, one cancelled by shutdown or vanished is forgotten.
    private func groupFinished(_ job: Job, outcome: JobOutcome) async -> Date? {
        switch outcome {
        case .completed(let output, let others):
            self.noteProduced([output] + others)
            self.postponements[job.source] = nil
        case .failed, .cancelledOnRequest, .skipped:
            // A group is never skipped as a duplicate: its rule compares single files only.
            self.postponements[job.source] = nil
        case .postponed:
            self.releaseGroup(job)
            let count = self.postponements[job.source, default: 0]
            self.postponements[job.source] = count + 1
            let delay = min(self.retryDelay * (1 << min(count, 16)), Self.maximumRetryDelay)
            self.logger.info(
                "Trying the group again later",
                metadata: ["group.path": "\(LogText.escaped(job.source))", "delay": "\(delay)"]
            )
            self.retryContinuation.yield(Retry(path: job.source, root: job.root, delay: delay))
            return self.clock.date() + TimeInterval(delay.components.seconds)
        case .cancelled, .vanished, .handedOver:
            self.releaseGroup(job)
        }
        return nil
    }
}
