import ChuteCore
import Foundation
import Logging
import ServiceLifecycle
import SystemPackage

/// The service that moves, deletes or quarantines the sources of watched files once their jobs end, as their rules
/// say (`source`, `quarantine`); the files themselves are moved by ``SourceDisposal``.
///
/// It hears of each ended job of a watched file as a ``JobCompletionSink``, and of the jobs an earlier run ended but
/// did not dispose of from the intake (``afterRestart(_:_:)``). Each source waits until it has been left alone: a
/// quiet period when its structure shows it whole, else `incompleteTimeout`, since a writer that closes between chunks
/// may still be adding to it. Then it is moved or deleted only if it still has the fingerprint of its job; a source
/// that changed meanwhile is left where it is, and its new version is taken as a new file. A group's files are moved
/// or deleted after a quiet period; a failed group is not quarantined (its files stay where they are).
///
/// Timers still running at shutdown are cancelled: those files are found again at the next start, where the
/// journal's record of their job brings them back here.
package struct SourceDisposer: Service, JobCompletionSink {
    /// What to do with a job's source once it has been left alone for `delay` after the job.
    private struct Disposal: Sendable {
        enum Action: Sendable {
            /// The rule's `source` policy, after the job put `output` in place.
            case afterSuccess(output: FilePath)
            /// The rule's `quarantine`, after the job failed because of the file itself.
            case quarantine(ConversionFailure)
        }

        var job: Job
        var action: Action
        var delay: Duration
    }

    private let disposals: AsyncStream<Disposal>
    private let continuation: AsyncStream<Disposal>.Continuation
    private let journal: any JobStore
    private let watches: [FilePath: WatchConfig]
    private let quietPeriod: Duration
    private let incompleteTimeout: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - config: the watched folders (each may set its own `incompleteTimeout`) and the settings' `quietPeriod` and
    ///     `incompleteTimeout`.
    ///   - journal: where a quarantined source's new place is recorded.
    package init(config: ChuteConfig, journal: any JobStore, logger: Logger) {
        (self.disposals, self.continuation) = AsyncStream.makeStream(of: Disposal.self, bufferingPolicy: .unbounded)
        self.journal = journal
        self.watches = Dictionary(config.watches.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
        self.quietPeriod = config.settings.quietPeriod
        self.incompleteTimeout = config.settings.incompleteTimeout
        self.logger = logger
    }

    /// Arms one timer per source to dispose of, until graceful shutdown.
    package func run() async throws {
        await withDiscardingTaskGroup { group in
            for await disposal in self.disposals.cancelOnGracefulShutdown() {
                group.addTask {
                    do { try await Task.sleep(for: disposal.delay) } catch { return }
                    await self.dispose(disposal)
                }
            }
            group.cancelAll()
        }
    }

    /// Schedules what the rule says of the source of a job that ended: after a completed or skipped job its `source`
    /// policy, after a job that failed because of its file its `quarantine`.
    package func jobFinished(_ job: Job, outcome: JobOutcome) async -> Date? {
        switch outcome {
        case .completed(let output, _):
            await self.schedule(job, .afterSuccess(output: output))
        case .skipped(let earlier):
            await self.schedule(job, .afterSuccess(output: earlier))
        case .failed(let failure) where !job.isGroup:
            await self.schedule(job, .quarantine(failure))
        case .failed, .cancelled, .cancelledOnRequest, .vanished, .postponed, .handedOver:
            // A job handed over is disposed of by the agent that ends it.
            break
        }
        return nil
    }

    /// Schedules what the rule says of a source whose job an earlier run ended: a kill between the job's record and the
    /// source's move, delete or quarantine leaves the source where it was.
    package func afterRestart(_ job: Job, _ earlier: StoredOutcome) async {
        switch earlier {
        case .completed(let output):
            await self.schedule(job, .afterSuccess(output: output))
        case .failed(let failure?):
            await self.schedule(job, .quarantine(failure))
        case .failed(nil), .cancelled:
            break
        }
    }

    /// The `incompleteTimeout` of a watched folder: its watch entry's, else the setting's.
    private func incompleteTimeout(of root: FilePath) -> Duration {
        self.watches[root]?.incompleteTimeout ?? self.incompleteTimeout
    }

    /// Arms the timer after which an ended job's source is moved, deleted or quarantined, if its rule says so.
    private func schedule(_ job: Job, _ action: Disposal.Action) async {
        if job.isGroup {
            guard case .afterSuccess = action, job.rule.sourcePolicy != .keep else { return }
            self.continuation.yield(Disposal(job: job, action: action, delay: self.quietPeriod))
            return
        }
        switch action {
        case .afterSuccess:
            guard job.rule.sourcePolicy != .keep else { return }
        case .quarantine(let failure):
            guard job.rule.quarantine != nil, failure.blamesTheInput else { return }
        }
        let (source, type, root) = (job.source, job.sniffed, job.root)
        let whole = await Blocking.run { SourceInspector.isWhole(source, type: type, beneath: root) }
        let delay = whole ? self.quietPeriod : self.incompleteTimeout(of: root)
        // A wait of incompleteTimeout (10 minutes by default) is said at the info level, so that a source still there
        // long after its job says why and until when.
        self.logger.log(
            level: whole ? .debug : .info,
            whole ? "Source left alone until it has been quiet after its job" : "Source left alone after its job",
            metadata: [
                "input.path": "\(LogText.escaped(source))", "job.id": "\(job.id)",
                "delay": "\(ValueParsing.describe(delay))",
                "reason": "\(whole ? "a quiet period" : "no check of its type shows it whole; incompleteTimeout")",
                "until": "\(LogText.localTime(Date() + delay / .seconds(1)))",
            ]
        )
        self.continuation.yield(Disposal(job: job, action: action, delay: delay))
    }

    /// Moves, deletes or quarantines an ended job's source if it is still the version the job took; a source that
    /// changed or went meanwhile is left alone (its new version is taken as a new file).
    private func dispose(_ disposal: Disposal) async {
        if disposal.job.isGroup {
            await self.disposeOfGroup(disposal)
            return
        }
        let job = disposal.job
        var logger = self.logger
        logger[metadataKey: "job.id"] = "\(job.id)"
        logger[metadataKey: "rule.name"] = "\(job.rule.name)"
        logger[metadataKey: "input.path"] = "\(LogText.escaped(job.source))"
        guard let now = try? SourceInspector.status(of: job.source, beneath: job.root),
            now.fingerprint == job.fingerprint
        else {
            logger.info("Source changed or gone since its job; left alone")
            return
        }
        // An uploader that opened the file again (an SMB client keeps its handle) may be about to write.
        if SourceInspector.hasWriters(job.source, beneath: job.root) {
            logger.debug("Source open for writing; moving, deleting or quarantining it waits")
            self.continuation.yield(disposal)
            return
        }
        switch disposal.action {
        case .afterSuccess(let output):
            await Self.disposeOfSource(job, output: output, logger: logger)
        case .quarantine(let failure):
            guard let moved = await Self.quarantineSource(job, failure: failure, logger: logger) else { return }
            do {
                try await self.journal.quarantined(job.id, at: moved)
            } catch {
                logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
        }
    }

    /// Moves or deletes the files of a completed group as its rule's `source` says, each only while it is still the
    /// version the group took, then its marker and, once empty, its folder.
    private func disposeOfGroup(_ disposal: Disposal) async {
        let job = disposal.job
        guard case .afterSuccess(let output) = disposal.action else { return }
        var logger = self.logger
        logger[metadataKey: "job.id"] = "\(job.id)"
        logger[metadataKey: "rule.name"] = "\(job.rule.name)"
        if job.members.contains(where: { SourceInspector.hasWriters($0.path, beneath: job.root) }) {
            logger.debug("A file of the group is open for writing; moving or deleting the group waits")
            self.continuation.yield(disposal)
            return
        }
        for member in job.members {
            var one = job
            one.members = []
            one.source = member.path
            one.fingerprint = member.fingerprint
            one.sniffed = member.sniffed
            one.doneMarker = nil
            var memberLogger = logger
            memberLogger[metadataKey: "input.path"] = "\(LogText.escaped(member.path))"
            guard let now = try? SourceInspector.status(of: member.path, beneath: job.root),
                now.fingerprint == member.fingerprint
            else {
                memberLogger.info("Source changed or gone since its job; left alone")
                continue
            }
            await Self.disposeOfSource(one, output: output, logger: memberLogger)
        }
        if let marker = job.doneMarker { SystemCall.unlink(marker) }
        // Only succeeds once nothing is left in it.
        SystemCall.rmdir(job.source)
    }

    /// Applies the rule's `source` policy after a completed job; a source that cannot be moved or deleted stays where
    /// it is, and the log says why.
    private static func disposeOfSource(_ job: Job, output: FilePath, logger: Logger) async {
        guard job.rule.sourcePolicy != .keep else { return }
        do {
            let moved = try await Blocking.run { () throws(ConversionFailure) in
                try SourceDisposal.afterSuccess(job, output: output, marker: job.doneMarker)
            }
            if let moved {
                logger.info("Source moved to the done folder", metadata: ["path": "\(LogText.escaped(moved))"])
            } else {
                logger.info("Source deleted after its output was verified")
            }
        } catch {
            logger.warning("Source left in place", metadata: ["error": "\(LogText.escaped(error.message))"])
        }
    }

    /// Moves the source of a job that failed because of the file itself into the rule's `quarantine` folder, if it
    /// has one; a source that cannot be moved stays where it is, and the log says why.
    ///
    /// - Returns: where the source went, or `nil` when it stayed.
    private static func quarantineSource(_ job: Job, failure: ConversionFailure, logger: Logger) async -> FilePath? {
        guard let folder = job.rule.quarantine, failure.blamesTheInput else { return nil }
        let sidecar = job.rule.sidecarPath(for: job.plan.path)
        do {
            let moved = try await Blocking.run { () throws(ConversionFailure) in
                try SourceDisposal.quarantine(job, into: folder, failure: failure, sidecar: sidecar)
            }
            logger.info("Source quarantined", metadata: ["path": "\(LogText.escaped(moved))"])
            return moved
        } catch {
            logger.warning("Source not quarantined", metadata: ["error": "\(LogText.escaped(error.message))"])
            return nil
        }
    }
}
