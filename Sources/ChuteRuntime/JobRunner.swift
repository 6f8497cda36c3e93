import ChuteCore
import Foundation
import Logging
import Synchronization
import SystemPackage

/// How a job ended.
package enum JobOutcome: Sendable, Equatable {
    /// The output is in place at this path; a job with several outputs (``OutputPart``) has the first here and the
    /// others in `others`.
    case completed(FilePath, others: [FilePath] = [])
    /// Nothing was converted: the source is identical to one the rule already converted, whose output is where this
    /// job's would go (`onDuplicate: skip`). The journal records the job as completed with that output.
    case skipped(duplicateOf: FilePath)
    /// The job failed; its sidecar says why.
    case failed(ConversionFailure)
    /// Shutdown stopped the job; its journal row says `interrupted`, so it runs again at the next start.
    case cancelled
    /// A request (the API's cancel) stopped the job: its worker was killed, its sidecar and journal row say
    /// `cancelled`, and the same version of the file is not taken again.
    case cancelledOnRequest
    /// The source disappeared (deleted or moved away) before the job started, or before its output was put in place:
    /// nothing was published, and the job's journal row was dropped.
    case vanished
    /// A transient failure (the target's disk is full, the source is busy): nothing was recorded, and the intake
    /// tries the file again after a back-off.
    case postponed(ConversionFailure)
    /// This agent lost its lease on the job (``LeaseLost``): another agent holds it now, or ran it. Nothing of this
    /// run was recorded or published.
    case handedOver
}

/// A job whose worker is done with it.
package enum Conversion: Sendable {
    /// The job is over (failed and recorded, cancelled or vanished).
    case ended(JobOutcome)
    /// The worker wrote the output under its temporary name; ``JobRunner/commit(_:)`` puts it in place.
    case converted(PendingCommit)
}

/// A converted output waiting to be renamed into place, with what its sidecar needs.
package struct PendingCommit: Sendable {
    fileprivate var record: Record
    fileprivate var temporary: FilePath
    fileprivate var logger: Logger

    /// The CPU time the worker spent on the conversion, as it measured it.
    package var cpuSeconds: Double? { self.record.report?.cpuSeconds }
}

/// Runs one job in two steps. ``convert(_:worker:launchFailure:)`` hashes the source while the worker writes a hidden
/// temporary file; ``commit(_:)`` checks the source did not change meanwhile, renames the output into place and
/// writes the sidecar. Splitting them lets a lane give its worker the next job while the last output is committed.
/// Each step is recorded in the ``Journal`` before it happens, so that a restart after a kill settles the job.
package struct JobRunner: Sendable {
    private let journal: any JobStore
    private let logger: Logger
    private let events: JobEvents
    private let cancellations: JobCancellations
    /// The watched folders, whose files `onConflict: overwrite` replaces only when Chute wrote them.
    private let watchedFolders: [FilePath]
    /// The try at which a transient failure of the target is final (`retryLimit`).
    private let retryLimit: Int
    /// The time of the sidecar's start, end and duration, and of progress records and events.
    private let clock: RuntimeClock

    /// - Parameters:
    ///   - events: where the job's `started`, `progress` events go (its final one is the runtime's).
    ///   - cancellations: tells a conversion cancelled on request from one cancelled by shutdown.
    ///   - watchedFolders: the watched folders, whose originals an output never replaces.
    ///   - retryLimit: the try at which a transient failure of the target (a full disk) is final.
    ///   - clock: the time of the sidecar's start, end and duration, and of progress (``RuntimeClock/system`` but in
    ///     tests).
    package init(
        journal: any JobStore,
        logger: Logger,
        events: JobEvents = JobEvents(),
        cancellations: JobCancellations = JobCancellations(),
        watchedFolders: [FilePath] = [],
        retryLimit: Int = Settings().retryLimit,
        clock: RuntimeClock = .system
    ) {
        self.clock = clock
        self.watchedFolders = watchedFolders
        self.retryLimit = retryLimit
        self.journal = journal
        self.logger = logger
        self.events = events
        self.cancellations = cancellations
    }

    /// The shortest time between two `progress` events of one job.
    static let progressEventInterval = Duration.milliseconds(500)

    /// Runs `job` on `worker`, or records `launchFailure` when no worker could be started.
    ///
    /// - Returns: `.converted` when the output waits to be committed; otherwise the job's outcome, where every
    ///   outcome but `.cancelled` and `.vanished` has left a sidecar.
    package func convert(
        _ job: Job,
        worker: WorkerProcess?,
        launchFailure: ConversionFailure? = nil
    ) async -> Conversion {
        var logger = self.logger
        logger[metadataKey: "job.id"] = "\(job.id)"
        logger[metadataKey: "rule.name"] = "\(job.rule.name)"
        logger[metadataKey: "input.path"] = "\(LogText.escaped(job.source))"

        guard let status = Self.currentStatus(of: job) else {
            logger.info("Source vanished before its job started")
            return .ended(.vanished)
        }
        if job.isGroup, let change = Self.changedMember(of: job) {
            // The folder is looked at anew after the back-off, with the files it then holds.
            let failure = ConversionFailure(.sourceBusy, "a file of the group changed after it was taken: \(change)")
            logger.warning(
                "Job postponed; it is tried again later",
                metadata: ["error.code": "\(failure.code.rawValue)", "error": "\(LogText.escaped(failure.message))"]
            )
            return .ended(.postponed(failure))
        }
        guard status.fingerprint == job.fingerprint else {
            // Written again while the job waited in the queue: the new version is taken once it is quiet.
            let failure = ConversionFailure(.sourceBusy, "the source changed after it was taken")
            logger.warning(
                "Job postponed; it is tried again later",
                metadata: ["error.code": "\(failure.code.rawValue)", "error": "\(LogText.escaped(failure.message))"]
            )
            return .ended(.postponed(failure))
        }
        let (source, root) = (job.readableSource, job.readableRoot)
        var record = Record(job: job, status: status, sha256: nil, clock: self.clock)
        let duplicate = await self.earlierOutput(of: job, size: status.fingerprint.size, logger: logger)
        // The source is hashed while the worker converts it, so the worker never waits for the hash; unless a
        // possible duplicate needed the hash first.
        async let hashing = Self.hashes(of: job, source: source, beneath: root, known: duplicate.hash)
        do {
            try await self.journal.begin(job)
        } catch let lost as LeaseLost {
            return .ended(Self.refuse(lost, logger))
        } catch {
            return .ended(
                await self.fail(record, ConversionFailure(.outputFailed, "cannot record the job: \(error)"), logger)
            )
        }
        if let earlier = duplicate.output, let hash = duplicate.hash, Self.output(earlier, isWhere: job.plan) {
            return .ended(await self.skip(job, duplicating: earlier, sha256: hash, logger: logger))
        }

        guard status.fingerprint.size > 0 else {
            // Only taken once it stayed empty for incompleteTimeout: no engine has anything to read in it.
            record.setHashes(await hashing)
            let failure = ConversionFailure(.corruptInput, "the file is empty (0 bytes), still after incompleteTimeout")
            return .ended(await self.fail(record, failure, logger))
        }
        guard let worker else {
            record.setHashes(await hashing)
            return .ended(
                await self.fail(record, launchFailure ?? ConversionFailure(.engineUnavailable, "no worker"), logger)
            )
        }
        record.libraries = worker.libraries
        do throws(ConversionFailure) {
            // A hand-off's output is written here and sent back: its folder is made by the agent that puts it there.
            if job.handoff == nil {
                try OutputCommitter.makeDirectory(job.plan.directory, ownership: job.rule.ownership, beforeCommit: true)
            }
        } catch {
            record.setHashes(await hashing)
            return .ended(await self.fail(record, error, logger))
        }
        let temporary = OutputCommitter.temporaryPath(for: job)
        var input = job.members.first?.path ?? job.readableSource
        var linkable = duplicate.output
        // A name no part's label can take (a label has no dot): removed with the job's other temporaries.
        let working = temporary.appendingToLastComponent("-pre.hook")
        if let pre = job.rule.preHook, !job.isGroup {
            switch await Self.runPreHook(pre, of: job, copy: working, logger: logger) {
            case .kept:
                SystemCall.unlink(working)
            case .changed:
                input = working
                linkable = nil
                record.warnings.append("the rule's pre hook changed the file: its changed copy was converted")
            case .refused(let message):
                OutputCommitter.removeTemporaries(of: temporary)
                record.setHashes(await hashing)
                return .ended(
                    await self.cancelOnRequest(record, logger, reason: "refused by the rule's pre hook: \(message)")
                )
            case .failed(let failure):
                OutputCommitter.removeTemporaries(of: temporary)
                record.setHashes(await hashing)
                return .ended(await self.fail(record, failure, logger))
            }
        }
        if let earlier = linkable {
            // The same content converted by this rule for another place (a photo copied into a second album): the
            // earlier output's bytes serve here too, linked rather than converted where the file system allows.
            let metadata: Logger.Metadata = ["duplicate.of": "\(LogText.escaped(earlier.string))"]
            if let link = await Blocking.run({ OutputCommitter.makeLinkedCopy(of: earlier, at: temporary) }) {
                record.setHashes(await hashing)
                record.report = ConversionReport(
                    outputBytes: (try? SourceInspector.status(of: temporary))?.fingerprint.size ?? 0,
                    details: ["duplicateOf": earlier.string, "duplicateLinkedBy": link.rawValue]
                )
                record.warnings.append(
                    "identical to \(earlier), an output of this rule: made as a \(link.rawValue) of it"
                )
                logger.info(
                    "Identical to an earlier output elsewhere; linked, not converted",
                    metadata: metadata.merging(["link": "\(link.rawValue)"]) { $1 }
                )
                return .converted(PendingCommit(record: record, temporary: temporary, logger: logger))
            }
            logger.info(
                "Identical to an earlier output elsewhere; converted, as it cannot be linked",
                metadata: metadata
            )
        }
        let request = ConversionRequest(
            jobID: job.id,
            engine: job.engine,
            input: input,
            output: temporary,
            format: job.rule.to,
            options: job.rule.options,
            limits: job.rule.limits,
            root: job.readableRoot,
            allowsHardLinks: job.allowsHardLinks,
            threads: job.threads,
            inputs: job.isGroup ? job.members.map(\.path) : nil
        )
        logger.debug("Job started", metadata: ["engine": "\(job.engine.rawValue)", "worker.pid": "\(worker.pid)"])
        // The progress log's start is taken before the `started` event, so that whoever hears the event and moves
        // the clock on (a test's manual clock) moves it after the start.
        let clock = self.clock
        var progressLog = ProgressLog(start: clock.now())
        var nextEvent = clock.now()
        self.events.publish(JobEvent(.started, of: job))
        let events = self.events
        let outcome = await worker.perform(request) { progress in
            let now = clock.now()
            progressLog.record(progress, to: logger, at: now)
            guard now >= nextEvent else { return }
            nextEvent = now + Self.progressEventInterval
            events.publish(JobEvent(.progress, of: job, progress: min(1, max(0, progress.fraction))))
        }
        record.setHashes(await hashing)
        SystemCall.unlink(working)
        switch outcome {
        case .cancelled where self.cancellations.wasRequested(job.id),
            .failed where self.cancellations.wasRequested(job.id):
            OutputCommitter.removeTemporaries(of: temporary)
            return .ended(await self.cancelOnRequest(record, logger))
        case .cancelled:
            OutputCommitter.removeTemporaries(of: temporary)
            do {
                try await self.journal.interrupt(job.id)
            } catch {
                // The row stays `running`, which the next start also takes as interrupted.
                logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
            logger.info("Job cancelled by shutdown; it runs again at the next start")
            return .ended(.cancelled)
        case .failed(let failure):
            OutputCommitter.removeTemporaries(of: temporary)
            return .ended(await self.fail(record, failure, logger))
        case .finished(let report):
            guard OutputPart.areWellFormed(report.parts) else {
                OutputCommitter.removeTemporaries(of: temporary)
                let failure = ConversionFailure(.internalError, "the worker reported malformed output parts")
                return .ended(await self.fail(record, failure, logger))
            }
            record.report = report
            return .converted(PendingCommit(record: record, temporary: temporary, logger: logger))
        }
    }

    /// What a rule's `pre:` hook made of a job's file.
    private enum PreHookVerdict {
        /// It exited 0 and left the copy as it was.
        case kept
        /// It exited 0 and changed or replaced the copy, which is converted instead.
        case changed
        /// It exited 1, with this message (its last line).
        case refused(String)
        /// Another status, or it was killed at its timeout, or the copy could not be made.
        case failed(ConversionFailure)
    }

    /// Runs a rule's `pre:` hook on a copy of the job's source at `copy`, with `CHUTE_JOB_ID`, `CHUTE_SOURCE`,
    /// `CHUTE_RULE` and `CHUTE_WORKING_PATH` (the copy) in its environment, as the post hooks run (``HookProcess``).
    private static func runPreHook(
        _ hook: RuleHook,
        of job: Job,
        copy: FilePath,
        logger: Logger
    ) async -> PreHookVerdict {
        var logger = logger
        logger[metadataKey: "hook"] = "\(LogText.escaped(hook.command[0]))"
        let source = job.readableSource
        do {
            try await Blocking.run {
                try FileManager.default.copyItem(atPath: source.string, toPath: copy.string)
            }
        } catch {
            return .failed(ConversionFailure(.outputFailed, "cannot copy the source for the rule's pre hook: \(error)"))
        }
        _ = OutputCommitter.applyOwnership(job.rule.ownership, to: copy)
        let before = try? SourceInspector.status(of: copy).fingerprint
        let ending = await HookProcess.run(
            hook.command,
            environment: [
                "CHUTE_JOB_ID": job.id, "CHUTE_SOURCE": job.source.string, "CHUTE_RULE": job.rule.name,
                "CHUTE_WORKING_PATH": copy.string,
            ],
            input: Data(),
            timeout: hook.timeout,
            ownership: job.rule.ownership,
            logger: logger
        )
        let said = ending.lastLine ?? "no message"
        if ending.status == 1, !ending.killed {
            logger.info("Pre hook refused the file", metadata: ["message": "\(LogText.escaped(said))"])
            return .refused(said)
        }
        guard ending.succeeded else {
            let how = ending.killed ? "was killed (signal \(ending.status))" : "exited with status \(ending.status)"
            return .failed(ConversionFailure(.internalError, "the rule's pre hook \(how): \(said)"))
        }
        guard let after = try? SourceInspector.status(of: copy), after.isRegularFile else {
            return .failed(ConversionFailure(.internalError, "the rule's pre hook removed the working copy"))
        }
        if after.fingerprint == before { return .kept }
        logger.info(
            "Pre hook changed the file; its copy is converted",
            metadata: ["bytes": "\(after.fingerprint.size)"]
        )
        return .changed
    }

    /// Whether an earlier output is where this job's output would land: in its planned folder, under its planned
    /// name or a free variant of it (`a-1.jpg` for `a.jpg`). Only then is an identical source a re-upload to skip.
    /// A name with `{taken}` is known only once converted; identical content has the same capture time, so there
    /// the folder decides.
    static func output(_ earlier: FilePath, isWhere plan: OutputPlan) -> Bool {
        guard earlier.removingLastComponent() == plan.directory, let name = earlier.lastComponent else { return false }
        if name == plan.name || plan.pendingName != nil { return true }
        // On bytes, as the free variants are made: `STEM-N.EXT`.
        let (stem, ext) = plan.name.stemAndExtensionBytes
        let suffix = ext.isEmpty ? [] : [UInt8(ascii: ".")] + ext
        let bytes = name.bytes
        guard bytes.count > stem.count + 1 + suffix.count, bytes.starts(with: stem + [UInt8(ascii: "-")]),
            bytes.suffix(suffix.count).elementsEqual(suffix)
        else { return false }
        let number = bytes.dropFirst(stem.count + 1).dropLast(suffix.count)
        return number.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Looks for an earlier output of the same rule from a source identical to this one, when the rule skips
    /// duplicates. The journal is asked first for completed jobs of the rule whose source had the same size and whose
    /// output still exists; only then is the source hashed, before its conversion rather than during it.
    ///
    /// - Returns: the earlier output if there is one, and the hash if it was computed.
    private func earlierOutput(of job: Job, size: Int64, logger: Logger) async -> (output: FilePath?, hash: String?) {
        // The earlier outputs of a hand-off are on the agent that found its file.
        guard job.rule.onDuplicate == .skip, !job.isGroup, job.handoff == nil else { return (nil, nil) }
        let candidates: [(output: FilePath, sha256: String)]
        do {
            candidates = try await self.journal.completedOutputs(rule: job.rule.name, sourceSize: size)
                .filter { SystemCall.access($0.output, F_OK) == 0 }
        } catch {
            logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            return (nil, nil)
        }
        guard !candidates.isEmpty else { return (nil, nil) }
        guard let hash = await Self.sha256(of: job.source, beneath: job.root, known: nil) else { return (nil, nil) }
        return (candidates.first { $0.sha256 == hash }?.output, hash)
    }

    /// The source's metadata now, if it is still there as the job needs it: a regular file, or for a group the same
    /// folder, whose status then carries the group's fingerprint (its files are compared by ``changedMember(of:)``).
    private static func currentStatus(of job: Job) -> SourceInspector.Status? {
        guard let status = try? SourceInspector.status(of: job.readableSource, beneath: job.readableRoot) else {
            return nil
        }
        guard job.isGroup else { return status.isRegularFile ? status : nil }
        guard status.isDirectory, status.fingerprint.device == job.fingerprint.device,
            status.fingerprint.inode == job.fingerprint.inode
        else { return nil }
        return SourceInspector.Status(
            fingerprint: job.fingerprint,
            isRegularFile: false,
            isDirectory: true,
            linkCount: 1
        )
    }

    /// The first file of a group that is gone or changed since the group was taken, in words; `nil` when every file
    /// is as it was.
    static func changedMember(of job: Job) -> String? {
        for member in job.members {
            guard let now = try? SourceInspector.status(of: member.path, beneath: job.root) else {
                return "\(member.path) is gone"
            }
            if now.fingerprint != member.fingerprint { return "\(member.path) was written to" }
        }
        return nil
    }

    /// The SHA-256 of the source, or for a group of each of its files in order (the folder has none); computed on a
    /// Dispatch thread unless it is `known`, `nil` for a file that cannot be read.
    private static func hashes(
        of job: Job,
        source: FilePath,
        beneath root: FilePath,
        known: String?
    ) async -> (source: String?, members: [String?]) {
        guard job.isGroup else { return (await Self.sha256(of: source, beneath: root, known: known), []) }
        var members: [String?] = []
        for member in job.members {
            members.append(await Self.sha256(of: member.path, beneath: root, known: nil))
        }
        return (nil, members)
    }

    /// The source's SHA-256, computed on a Dispatch thread unless it is `known`; `nil` when it cannot be read.
    private static func sha256(of source: FilePath, beneath root: FilePath, known: String?) async -> String? {
        if let known { return known }
        return try? await Blocking.run { try SourceInspector.sha256(of: source, beneath: root) }
    }

    /// Ends a job whose source is identical to the source of `earlier`, an output of the same rule that still
    /// exists: nothing is converted or written, and the journal records the job as completed with that output; the
    /// intake then applies the rule's `source` policy to it as after a conversion, once it has been left alone.
    private func skip(_ job: Job, duplicating earlier: FilePath, sha256: String, logger: Logger) async -> JobOutcome {
        do {
            try await self.journal.skipDuplicate(job.id, of: earlier, sha256: sha256)
        } catch {
            // The row stays `running`: the next start takes the file again, and skips it again.
            logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
        logger.info(
            "Skipped: identical to a source this rule already converted",
            metadata: ["duplicate.of": "\(LogText.escaped(earlier))", "sha256": "\(sha256)"]
        )
        return .skipped(duplicateOf: earlier)
    }

    /// Puts a converted output in place: checks that the source did not change during the conversion, records the
    /// output's inode and sidecar in the journal, renames the output under its planned (or a free) name, its
    /// `{taken}` the capture time that the worker reported, and writes the sidecar. The parts of a job with several
    /// outputs (``OutputPart``) are recorded and renamed as one set, with one sidecar named after the set
    /// (``OutputCommitter/commit(_:beside:as:policy:)``). The source is left where it is: ``SourceDisposer``
    /// applies the rule's `source` policy once it has been left alone for a while after the job.
    ///
    /// - Returns: `.completed`, or `.failed` with its sidecar written and the temporary files removed.
    package func commit(_ pending: PendingCommit) async -> JobOutcome {
        var record = pending.record
        // From here on, the sidecar of a failure too is named after the output's final name.
        Self.settleName(of: &record)
        let job = record.job
        let logger = pending.logger
        // A job with several outputs commits its parts as one set: all are renamed into place, or none.
        let parts = record.report?.parts ?? []
        let temporaries =
            parts.isEmpty ? [pending.temporary] : parts.map { $0.temporaryPath(beside: pending.temporary) }
        func removeTemporaries() {
            for temporary in temporaries { SystemCall.unlink(temporary) }
        }
        if !job.isGroup, Self.sourceVanished(job) {
            // Deleted or moved away while it was converted, perhaps to stop its conversion: nothing is published.
            removeTemporaries()
            return await self.vanish(job, logger)
        }
        if job.isGroup ? Self.changedMember(of: job) != nil : Self.sourceChanged(job, from: record.status) {
            removeTemporaries()
            // Someone is still writing it: the new version is taken later, whole.
            let failure = ConversionFailure(
                .sourceBusy,
                "the source changed while it was converted; the output was discarded"
            )
            return await self.fail(record, failure, logger)
        }
        if let handoff = job.handoff {
            return await self.commitRemotely(pending, record, to: handoff, parts: parts, temporaries: temporaries)
        }
        // Before the rename, so that the output never shows with the daemon's owner and permissions.
        let ownershipWarnings = temporaries.compactMap { OutputCommitter.applyOwnership(job.rule.ownership, to: $0) }
        record.warnings += ownershipWarnings.prefix(1)
        do {
            let inodes = try temporaries.map { try SourceInspector.status(of: $0).fingerprint.inode }
            try await self.recordCommitting(record, cpuSeconds: pending.cpuSeconds, parts: parts, inodes: inodes)
        } catch let lost as LeaseLost {
            removeTemporaries()
            return Self.refuse(lost, logger)
        } catch {
            removeTemporaries()
            return await self.fail(
                record,
                ConversionFailure(.outputFailed, "cannot record the output: \(error)"),
                logger
            )
        }
        let (policy, guardWarning) = await Self.guardedPolicy(
            job.rule.onConflict,
            plan: job.plan,
            parts: parts,
            sources: Set([job.source] + job.members.map(\.path)),
            watchedFolders: self.watchedFolders,
            journal: self.journal,
            logger: logger
        )
        record.warnings += guardWarning.map { [$0] } ?? []
        do {
            // The write above was fenced; a pause since (SIGSTOP, a frozen VM) may have outlasted the lease.
            try await self.journal.confirmHeld(job.id, askingStore: false)
        } catch {
            removeTemporaries()
            return Self.refuse(LeaseLost(jobID: job.id, why: "\(error)"), logger)
        }
        do throws(ConversionFailure) {
            // The renames, the folder's fsync and the sidecar's write can block for long on a slow or network mount:
            // they run on a Dispatch thread (``Blocking``), never on the cooperative pool, between the journal's steps.
            // `named` is the path the sidecar is named after: the output, or the set's planned name (`photo.png`).
            let (named, finals, warnings) = try await Blocking.run {
                [policy] () throws(ConversionFailure) -> (FilePath, [FilePath], [String]) in
                if parts.isEmpty {
                    let (final, warning) = try OutputCommitter.commit(
                        pending.temporary,
                        as: job.plan,
                        policy: policy
                    )
                    return (final, [final], warning.map { [$0] } ?? [])
                }
                let set = try OutputCommitter.commit(
                    parts,
                    beside: pending.temporary,
                    as: job.plan,
                    policy: policy
                )
                return (set.set, set.paths, set.warnings)
            }
            record.warnings += warnings
            let final = finals[0]
            CrashPoint.afterRename.reached()
            if job.rule.writesSidecar(completed: true) {
                let sidecar = job.rule.sidecarPath(for: named)
                let contents = record.sidecar(output: final, failure: nil, set: parts.isEmpty ? [] : finals)
                try await Blocking.run { () throws(ConversionFailure) in
                    try OutputCommitter.makeDirectory(sidecar.removingLastComponent(), ownership: job.rule.ownership)
                    try OutputCommitter.writeSidecar(contents, at: sidecar, ownership: job.rule.ownership)
                }
            }
            logger.info(
                "Job completed",
                metadata: [
                    "output.path": "\(LogText.escaped(final))",
                    "output.count": "\(finals.count)",
                    "output.bytes": "\(record.report?.outputBytes ?? 0)",
                    "duration": "\(record.roundedSeconds)",
                ]
            )
            do {
                try await self.journal.finish(
                    job.id,
                    output: final,
                    sidecar: job.rule.writesSidecar(completed: true) ? job.rule.sidecarPath(for: named) : nil
                )
            } catch {
                // The row stays `committing`; the next start finds the output by its inode and completes it.
                logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
            return .completed(final, others: Array(finals.dropFirst()))
        } catch {
            removeTemporaries()
            return await self.fail(record, error, logger)
        }
    }

    /// Records in the journal that the output, converted and synced under its temporary names (whose inodes are
    /// `inodes`), is being put in place, with its sidecar for a restart that finds it there.
    private func recordCommitting(
        _ record: Record,
        cpuSeconds: Double?,
        parts: [OutputPart],
        inodes: [UInt64]
    ) async throws {
        let job = record.job
        let sidecarFolder: FilePath? =
            if case .folder = job.rule.sidecars {
                job.rule.sidecarPath(for: job.plan.path).removingLastComponent()
            } else {
                nil
            }
        try await self.journal.committing(
            job.id,
            outputInode: inodes[0],
            parts: parts.isEmpty ? nil : zip(parts, inodes).map { OutputPartRecord(label: $0.label, inode: $1) },
            sidecar: record.sidecar(output: nil, failure: nil),
            sidecarFolder: sidecarFolder,
            writesSidecar: job.rule.writesSidecar(completed: true),
            cost: job.estimatedCost.flatMap { estimate in
                cpuSeconds.map { (job.engine, CostHistory.Sample(estimate: estimate, cpuSeconds: $0)) }
            }
        )
    }

    /// How many times an output whose SHA-256 did not match when it arrived is sent back before the job fails.
    static let handoffAttempts = 3

    /// Puts in place the output of a job whose file another agent found (``Handoff``), on that agent: each file is sent
    /// back with its SHA-256, which that agent checks when it arrives (one changed in flight is sent again, up to
    /// ``handoffAttempts`` times, and never placed); then the journal records `committing` with the inodes the files
    /// have there, that agent renames them into place under the rule's `onConflict` and writes the sidecar (each of
    /// its steps granted only while this agent's lease holds), and the journal records the job `completed`.
    private func commitRemotely(
        _ pending: PendingCommit,
        _ record: Record,
        to handoff: Handoff,
        parts: [OutputPart],
        temporaries: [FilePath]
    ) async -> JobOutcome {
        var record = record
        let (job, logger, owner) = (record.job, pending.logger, handoff.owner)
        let names = temporaries.compactMap { $0.lastComponent?.string }
        func discard() async {
            for temporary in temporaries { SystemCall.unlink(temporary) }
            await owner.discard(names)
        }
        do {
            var inodes: [UInt64] = []
            for (temporary, name) in zip(temporaries, names) {
                inodes.append(try await Self.deliver(temporary, as: name, to: owner, logger: logger))
            }
            for temporary in temporaries { SystemCall.unlink(temporary) }
            try await self.recordCommitting(record, cpuSeconds: pending.cpuSeconds, parts: parts, inodes: inodes)
            try await self.journal.confirmHeld(job.id, askingStore: false)
            let placed = try await owner.place(
                HandoffPlacement(
                    temporary: pending.temporary.lastComponent?.string ?? "",
                    name: Data(job.plan.name.bytes),
                    parts: parts,
                    policy: job.rule.onConflict
                )
            )
            let finals = placed.finals.map { FilePath(bytes: $0) }
            let named = FilePath(bytes: placed.named)
            record.warnings += placed.warnings
            guard let final = finals.first, let namedComponent = named.lastComponent else {
                throw HandoffError.refused(status: 502, message: "the agent placed no output")
            }
            CrashPoint.afterRename.reached()
            if job.rule.writesSidecar(completed: true) {
                let contents = record.sidecar(output: final, failure: nil, set: parts.isEmpty ? [] : finals)
                try await owner.writeSidecar(contents, namedAfter: namedComponent)
            }
            logger.info(
                "Job completed",
                metadata: [
                    "output.path": "\(LogText.escaped(final))", "output.count": "\(finals.count)",
                    "output.bytes": "\(record.report?.outputBytes ?? 0)", "duration": "\(record.roundedSeconds)",
                    "handoff.owner": "\(owner.owner)",
                ]
            )
            do {
                try await self.journal.finish(
                    job.id,
                    output: final,
                    sidecar: job.rule.writesSidecar(completed: true) ? job.rule.sidecarPath(for: named) : nil
                )
            } catch {
                logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
            return .completed(final, others: Array(finals.dropFirst()))
        } catch let lost as LeaseLost {
            await discard()
            return Self.refuse(lost, logger)
        } catch {
            await discard()
            return await self.fail(
                record,
                ConversionFailure(.outputFailed, "cannot put the output in place on agent \(owner.owner): \(error)"),
                logger
            )
        }
    }

    /// Sends one output file back (``commitRemotely``), again while it arrives changed, at most ``handoffAttempts``
    /// times.
    ///
    /// - Returns: its inode on the agent that keeps it.
    private static func deliver(
        _ file: FilePath,
        as name: String,
        to owner: any HandoffTransport,
        logger: Logger
    ) async throws -> UInt64 {
        let sha256 = try await Blocking.run { try SourceInspector.sha256(of: file) }
        var attempt = 1
        while true {
            do {
                return try await owner.deliver(file, as: name, sha256: sha256)
            } catch HandoffError.corrupted(let message) where attempt < Self.handoffAttempts {
                logger.warning(
                    "Output refused by the agent that has the source: its SHA-256 did not match on arrival; sending it again",
                    metadata: [
                        "handoff.owner": "\(owner.owner)", "attempt": "\(attempt)",
                        "error": "\(LogText.escaped(message))",
                    ]
                )
                attempt += 1
            }
        }
    }

    /// Renders the job's output name with the capture time that its worker reported, when the name has `{taken}`
    /// (``OutputPlan/taken(at:)``), and records that time in the sidecar's details (`taken`); without one, the name
    /// keeps the source's modification time, and a warning says so.
    private static func settleName(of record: inout Record) {
        guard record.job.plan.pendingName != nil else { return }
        if let captured = record.report?.captured, let time = captured.instant() {
            record.job.plan = record.job.plan.taken(at: time)
            record.report?.details["taken"] = captured.description
            return
        }
        let source = record.job.isGroup ? "the group's first file" : "the source"
        record.warnings.append(
            "\(source) has no capture time (EXIF DateTimeOriginal or CreateDate, QuickTime creation_time): {taken} in "
                + "the name is its modification time"
        )
    }

    /// Keeps `onConflict: overwrite` from replacing a planned output path that is one of `sources` (the job's source
    /// or a member of its group), or an existing file in a watched folder that is not an output Chute wrote (a user's
    /// original). A journal that cannot be read protects the file.
    ///
    /// - Returns: the policy to commit with: `rename` instead of `overwrite` when such a file is in the way, with the
    ///   warning that says so.
    package static func guardedPolicy(
        _ policy: ConflictPolicy,
        plan: OutputPlan,
        parts: [OutputPart],
        sources: Set<FilePath>,
        watchedFolders: [FilePath],
        journal: any JobStore,
        logger: Logger
    ) async -> (ConflictPolicy, String?) {
        guard policy == .overwrite else { return (policy, nil) }
        let planned =
            parts.isEmpty ? [plan.path] : parts.map { plan.directory.appending($0.name(forSetNamed: plan.name)) }
        guard
            let kept = await Self.firstIrreplaceable(
                among: planned,
                sources: sources,
                watchedFolders: watchedFolders,
                journal: journal,
                logger: logger
            )
        else { return (policy, nil) }
        return (
            .rename,
            "onConflict: overwrite: \(kept.readableString) was not replaced: it is a source or a file of a watched folder "
                + "that Chute did not write; the output took a free name"
        )
    }

    /// The first of `paths` that ``guardedPolicy(_:plan:parts:sources:watchedFolders:journal:logger:)`` keeps from
    /// being replaced, or `nil`.
    private static func firstIrreplaceable(
        among paths: [FilePath],
        sources: Set<FilePath>,
        watchedFolders: [FilePath],
        journal: any JobStore,
        logger: Logger
    ) async -> FilePath? {
        for path in paths {
            guard let existing = try? SourceInspector.status(of: path) else { continue }
            if sources.contains(path) { return path }
            guard watchedFolders.contains(where: { path.starts(with: $0) }) else { continue }
            do {
                if try await journal.isOutput(path, inode: existing.fingerprint.inode) { continue }
            } catch {
                logger.error("Cannot read the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
            return path
        }
        return nil
    }

    /// Whether a single file's source is gone from its path since it was taken.
    private static func sourceVanished(_ job: Job) -> Bool {
        guard let now = try? SourceInspector.status(of: job.readableSource, beneath: job.readableRoot) else {
            return true
        }
        return !now.isRegularFile
    }

    /// Ends a job whose source was deleted or moved away after it was taken: its journal row is dropped, so that the
    /// file, if it comes back, is taken as a new one; no output or sidecar is written.
    private func vanish(_ job: Job, _ logger: Logger) async -> JobOutcome {
        do {
            try await self.journal.forget(job.id)
        } catch {
            logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
        logger.info("Source vanished while its job ran; the output was discarded")
        return .vanished
    }

    /// Whether a single file's source has another fingerprint now than `status` (a source gone is not changed).
    private static func sourceChanged(_ job: Job, from status: SourceInspector.Status) -> Bool {
        guard let now = try? SourceInspector.status(of: job.readableSource, beneath: job.readableRoot) else {
            return false
        }
        return now.fingerprint != status.fingerprint
    }

    /// ``JobOutcome/handedOver`` when the store says this agent lost its lease on the job, before anything of a
    /// failure is written: the agent that holds the job now writes its sidecar.
    private func lostLease(_ job: Job, _ logger: Logger) async -> JobOutcome? {
        do {
            try await self.journal.confirmHeld(job.id, askingStore: true)
            return nil
        } catch let lost as LeaseLost {
            return Self.refuse(lost, logger)
        } catch {
            // The store cannot say: the failure is recorded as usual, and its write is fenced.
            return nil
        }
    }

    /// Logs that a result of this agent is refused because its lease on the job was lost.
    private static func refuse(_ lost: LeaseLost, _ logger: Logger) -> JobOutcome {
        logger.warning(
            "Result refused: the lease on the job was lost, and nothing of this run is published",
            metadata: ["reason": "\(LogText.escaped(lost.why))"]
        )
        return .handedOver
    }

    /// Records a failed job: its sidecar, then its journal row. A transient failure of a watched file is not recorded:
    /// its journal row is dropped (so a restart tries it too) and the job is postponed; an upload's or a command's
    /// fails, since nothing would find its file again. A watched file is also postponed for any failure of a source
    /// that changed after it was taken: a writer that closes between chunks makes a part of a file look damaged, and the whole
    /// file is taken later. The source is not quarantined here: ``SourceDisposer`` does it once the source has been
    /// left alone for a while after the job.
    private func fail(_ record: Record, _ failure: ConversionFailure, _ logger: Logger) async -> JobOutcome {
        if let lost = await self.lostLease(record.job, logger) { return lost }
        if !record.job.isGroup, Self.sourceVanished(record.job) { return await self.vanish(record.job, logger) }
        var failure = failure
        if !failure.isTransient, record.job.isGroup, let change = Self.changedMember(of: record.job) {
            failure = ConversionFailure(
                .sourceBusy,
                "a file of the group changed after it was taken: \(change) (\(failure.message))"
            )
        } else if !failure.isTransient, !record.job.isGroup,
            let now = try? SourceInspector.status(of: record.job.readableSource, beneath: record.job.readableRoot),
            now.fingerprint != record.job.fingerprint
        {
            failure = ConversionFailure(.sourceBusy, "the source changed after it was taken (\(failure.message))")
        }
        if failure.isTransient, record.job.origin != .watched {
            // Only a watched file is found again for a later try; an upload's or a command's job ends here, and its
            // client is told why (it may send the file again once there is room).
            failure = ConversionFailure(failure.code, failure.message + Self.sizes(of: record.job))
        } else if failure.isTransient, failure.code != .sourceBusy, record.job.attempt >= self.retryLimit {
            // Each version of a busy source is a new file, waited for without limit; a target that stays full is not.
            failure = ConversionFailure(
                failure.code,
                "\(failure.message); gave up after \(record.job.attempt) tries (retryLimit)"
                    + Self.sizes(of: record.job)
            )
        } else if failure.isTransient {
            do {
                try await self.journal.forget(record.job.id)
            } catch {
                logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
            }
            logger.warning(
                "Job postponed; it is tried again later",
                metadata: ["error.code": "\(failure.code.rawValue)", "error": "\(LogText.escaped(failure.message))"]
            )
            return .postponed(failure)
        }
        let sidecarPath = record.job.rule.sidecarPath(for: record.job.plan.path)
        let sidecar = record.sidecar(output: nil, failure: failure)
        let written = await Self.writeSidecar(sidecar, at: sidecarPath, of: record.job, logger: logger)
        do {
            try await self.journal.fail(record.job.id, failure: failure, sidecar: written ? sidecarPath : nil)
        } catch {
            // The row stays `running`: the next start runs the job again, and its new sidecar replaces this one.
            logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
        logger.error(
            "Job failed",
            metadata: [
                "error.code": "\(failure.code.rawValue)",
                "error": "\(LogText.escaped(failure.message))",
                // Only a sidecar that is there: one that could not be written was logged as such above.
                "sidecar": "\(written ? LogText.escaped(sidecarPath) : "none")",
            ]
        )
        CrashPoint.afterFailure.reached()
        return .failed(failure)
    }

    /// The sizes a person needs to make room for a job that a full target stopped: the space free on the target's
    /// file system and the source's size, as `: 12 KB free on the target's file system, for a source of 4.6 MB`.
    /// The corresponding C function is `statvfs`.
    private static func sizes(of job: Job) -> String {
        func bytes(_ count: Int64) -> String { ByteCountFormatter.string(fromByteCount: count, countStyle: .file) }
        var info = statvfs()
        let source = bytes(job.fingerprint.size)
        guard statvfs(job.plan.directory.string, &info) == 0 else { return ": the source is \(source)" }
        let free = Int64(info.f_bavail) * Int64(info.f_frsize)
        let total = Int64(info.f_blocks) * Int64(info.f_frsize)
        return ": \(bytes(free)) free of \(bytes(total)) on the target's file system, for a source of \(source)"
    }

    /// Records a job cancelled on request: its sidecar says `cancelled`, then its journal row, so that the same version
    /// of the file is not taken again (a new version is).
    private func cancelOnRequest(
        _ record: Record,
        _ logger: Logger,
        reason message: String = "cancelled on request"
    ) async -> JobOutcome {
        if let lost = await self.lostLease(record.job, logger) { return lost }
        let reason = ConversionFailure(.cancelled, message)
        let sidecarPath = record.job.rule.sidecarPath(for: record.job.plan.path)
        let sidecar = record.sidecar(output: nil, failure: reason, status: .cancelled)
        let written = await Self.writeSidecar(sidecar, at: sidecarPath, of: record.job, logger: logger)
        do {
            try await self.journal.cancel(record.job.id, reason: reason, sidecar: written ? sidecarPath : nil)
        } catch {
            logger.error("Cannot update the journal", metadata: ["error": "\(LogText.escaped("\(error)"))"])
        }
        logger.info(
            "Job cancelled on request",
            metadata: [
                "sidecar": "\(written ? LogText.escaped(sidecarPath) : "none")",
                "reason": "\(LogText.escaped(message))",
            ]
        )
        return .cancelledOnRequest
    }

    /// Writes the sidecar of a job that converted nothing, with its folder (for a hand-off, on the agent that found
    /// its file); one that cannot be written is logged, with where and why.
    ///
    /// - Returns: whether it was written.
    private static func writeSidecar(_ sidecar: Sidecar, at path: FilePath, of job: Job, logger: Logger) async -> Bool {
        let message: String
        if let handoff = job.handoff {
            do {
                try await handoff.owner.writeSidecar(sidecar, namedAfter: job.plan.name)
                return true
            } catch {
                message = "on agent \(handoff.owner.owner): \(error)"
            }
        } else {
            do throws(ConversionFailure) {
                let ownership = job.rule.ownership
                try OutputCommitter.makeDirectory(path.removingLastComponent(), ownership: ownership)
                try OutputCommitter.writeSidecar(sidecar, at: path, ownership: ownership)
                return true
            } catch {
                message = error.message
            }
        }
        logger.error(
            "Cannot write the sidecar of a job that converted nothing",
            metadata: [
                "sidecar": "\(LogText.escaped(path.string))", "status": "\(sidecar.status.rawValue)",
                "error": "\(LogText.escaped(message))",
            ]
        )
        return false
    }
}

/// What a job has gathered so far, turned into a ``Sidecar`` at the end.
private struct Record: Sendable {
    var job: Job
    var status: SourceInspector.Status
    var sha256: String?
    /// The SHA-256 of each file of a group job, in order.
    var memberHashes: [String?] = []
    /// The job's start, on the wall clock and on `clock`'s monotonic time.
    var started: Date
    var clockStart: Duration
    var clock: RuntimeClock
    var libraries: [String: String] = [:]
    var report: ConversionReport?
    var warnings: [String] = []

    init(job: Job, status: SourceInspector.Status, sha256: String?, clock: RuntimeClock) {
        self.job = job
        self.status = status
        self.sha256 = sha256
        self.started = clock.date()
        self.clockStart = clock.now()
        self.clock = clock
    }

    /// Takes the hashes computed while the worker converted.
    mutating func setHashes(_ hashes: (source: String?, members: [String?])) {
        self.sha256 = hashes.source
        self.memberHashes = hashes.members
    }

    var seconds: Double {
        let elapsed = self.clock.now() - self.clockStart
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// ``seconds`` to the millisecond, as the sidecar and the log say it (`1.701`, not `1.7012126969999999`).
    var roundedSeconds: Double { (self.seconds * 1000).rounded() / 1000 }

    /// - Parameter set: the final paths of a job's parts (``OutputPart``), in the order of its report's; `output` is the
    ///   first of them.
    /// - Parameter status: the job's status, when not what `failure` says (`cancelled`).
    func sidecar(
        output: FilePath?,
        failure: ConversionFailure?,
        set: [FilePath] = [],
        status: Sidecar.Status? = nil
    ) -> Sidecar {
        let iso = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let parts = zip(set, self.report?.parts ?? []).map { Sidecar.Output(path: $0, size: $1.bytes) }
        return Sidecar(
            chuteVersion: ChuteVersion.current,
            jobID: self.job.id,
            status: status ?? (failure == nil ? .completed : .failed),
            rule: self.job.rule.name,
            engine: self.job.engine.rawValue,
            libraries: self.libraries,
            parameters: Sidecar.Parameters(format: self.job.rule.to.name, options: self.job.rule.options),
            source: Sidecar.Source(
                path: self.job.source,
                size: self.status.fingerprint.size,
                mtime: self.status.fingerprint.modified.formatted(iso),
                sha256: self.sha256,
                sniffedType: self.job.sniffed?.rawValue
            ),
            output: parts.first ?? output.map { Sidecar.Output(path: $0, size: self.report?.outputBytes ?? 0) },
            startedAt: self.started.formatted(iso),
            endedAt: self.clock.date().formatted(iso),
            durationSeconds: self.roundedSeconds,
            cpuSeconds: failure == nil ? self.report?.cpuSeconds.map { ($0 * 1000).rounded() / 1000 } : nil,
            error: failure.map { Sidecar.Failure(code: $0.code.rawValue, message: $0.message) },
            warnings: (self.report?.warnings ?? []) + self.warnings,
            details: self.report?.details ?? [:],
            outputs: parts.isEmpty ? nil : parts,
            inputs: self.job.isGroup
                ? self.job.members.enumerated().map { index, member in
                    Sidecar.Source(
                        path: member.path,
                        size: member.fingerprint.size,
                        mtime: member.fingerprint.modified.formatted(iso),
                        sha256: index < self.memberHashes.count ? self.memberHashes[index] : nil,
                        sniffedType: member.sniffed?.rawValue
                    )
                }
                : nil,
            agent: self.job.claim?.agent
        )
    }
}

/// Where the crash tests make the daemon kill itself, to hit the windows that a kill from outside would seldom hit.
///
/// `CHUTE_TEST_KILL_AFTER_RENAME=N` makes the daemon send itself SIGKILL right after the N-th output (or set of
/// outputs) is renamed into place, before that output's sidecar and journal row are written;
/// `CHUTE_TEST_KILL_AFTER_PART_RENAME=N` right after the N-th part of a set (``OutputPart``) is renamed, with the rest
/// of the set still under temporary names; `CHUTE_TEST_KILL_AFTER_FAILURE=N` right after the N-th failed job is
/// recorded, before its source is quarantined. Unset, a crash point does nothing.
package enum CrashPoint: Sendable {
    case afterRename
    case afterPartRename
    case afterFailure

    private static let renames = Atomic<Int>(0)
    private static let partRenames = Atomic<Int>(0)
    private static let failures = Atomic<Int>(0)
    private static let killAfterRename = ProcessInfo.processInfo.environment["CHUTE_TEST_KILL_AFTER_RENAME"]
        .flatMap { Int($0) }
    private static let killAfterPartRename = ProcessInfo.processInfo.environment["CHUTE_TEST_KILL_AFTER_PART_RENAME"]
        .flatMap { Int($0) }
    private static let killAfterFailure = ProcessInfo.processInfo.environment["CHUTE_TEST_KILL_AFTER_FAILURE"]
        .flatMap { Int($0) }

    /// Counts a pass through this point, and kills the process when the environment asks for it here.
    func reached() {
        let count: Int
        let limit: Int?
        switch self {
        case .afterRename:
            limit = Self.killAfterRename
            count = limit == nil ? 0 : Self.renames.add(1, ordering: .relaxed).newValue
        case .afterPartRename:
            limit = Self.killAfterPartRename
            count = limit == nil ? 0 : Self.partRenames.add(1, ordering: .relaxed).newValue
        case .afterFailure:
            limit = Self.killAfterFailure
            count = limit == nil ? 0 : Self.failures.add(1, ordering: .relaxed).newValue
        }
        if let limit, count == limit {
            kill(getpid(), SIGKILL)
        }
    }
}
