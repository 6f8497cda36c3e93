import ChuteCore
import Foundation
import SystemPackage

/// The durable record of every job, from the moment it is accepted until its history is pruned: what the intake, the
/// job runner, recovery, the status API and the notifier read and write. ``SQLiteJobStore`` (the journal file beside
/// the rules) is the implementation a single daemon uses.
///
/// A job goes `queued` (accepted, waiting for a lane), `running` (the worker converts), `committing` (the output is
/// converted and synced under its temporary name, whose inode is recorded with the sidecar to write), then
/// `completed`, `failed` or `cancelled`; a job that shutdown stops goes from `running` to `interrupted`. A kill can stop
/// it anywhere: ``unfinishedJobs()`` lists what it left, ``JobRecovery`` decides what becomes of each (doing the file
/// work outside the store), and ``settle(_:)`` records those decisions.
///
/// A source whose path and fingerprint have a `completed`, `failed` or `cancelled` job was handled and is not taken
/// again (``outcome(of:fingerprint:)``); new content at the same path has another fingerprint and is.
///
/// - Important: Every write, once asked for, is done even if the asking task is cancelled: shutdown cancels the jobs
///   whose end it records. A write returns once it is durable.
package protocol JobStore: Sendable {
    // MARK: Accepting and running jobs

    /// Records a job accepted for conversion and waiting for a lane (`queued`), with its origin: a kill before it
    /// starts leaves it for ``unfinishedJobs()``.
    func accept(_ job: Job) async throws

    /// Records that a job starts converting (`running`); a group job with its members. A job that was not accepted
    /// first is recorded all the same.
    func begin(_ job: Job) async throws

    /// Records that a job's output is converted and synced under its temporary name, with the inode that finds it
    /// after the rename and the sidecar to write for it (its output path is filled in then).
    ///
    /// - Parameters:
    ///   - parts: for a job with several outputs, each part's label and inode, in order (`outputInode` is the first's).
    ///   - sidecarFolder: the folder its sidecar goes to, or `nil` for beside the output.
    ///   - writesSidecar: `false` when the rule writes no sidecar for a completed job (`sidecars: failed-only`).
    ///   - cost: the engine that converted it, the model's estimate and the CPU time the conversion took, for
    ///     ``costSamples(window:)``.
    func committing(
        _ jobID: String,
        outputInode: UInt64,
        parts: [OutputPartRecord]?,
        sidecar: Sidecar,
        sidecarFolder: FilePath?,
        writesSidecar: Bool,
        cost: (engine: EngineKind, sample: CostHistory.Sample)?
    ) async throws

    /// Records that a job completed with `output` in place, and its sidecar at `sidecar` (`nil`: none written).
    func finish(_ jobID: String, output: FilePath, sidecar: FilePath?) async throws

    /// Records that a job failed, and why, with its sidecar at `sidecar`.
    func fail(_ jobID: String, failure: ConversionFailure, sidecar: FilePath?) async throws

    /// Records that a request cancelled a queued or running job, with its sidecar at `sidecar`: the same version of
    /// its source is not taken again.
    func cancel(_ jobID: String, reason: ConversionFailure, sidecar: FilePath?) async throws

    /// Records that shutdown cancelled a job before its output was put in place, so that it runs again at the next
    /// start.
    func interrupt(_ jobID: String) async throws

    /// Forgets a job (postponed, vanished, or refused by the queue), so that its file is taken as a new one.
    func forget(_ jobID: String) async throws

    /// Records a job that converted nothing because its source is identical to the source of `output`: it counts as
    /// completed with that output, so the same source is not taken again.
    func skipDuplicate(_ jobID: String, of output: FilePath, sha256: String) async throws

    /// Confirms that this daemon may still publish the job's output or sidecar: in a store several agents share
    /// (``SharedQueue``), that its lease on the job holds. A store of one daemon confirms every job.
    ///
    /// - Parameter askingStore: whether the store itself is asked; otherwise only this agent's clock is held against
    ///   the lease's last renewal (for the moment before a rename, which a write just fenced).
    /// - Throws: ``LeaseLost`` when the lease was lost.
    func confirmHeld(_ jobID: String, askingStore: Bool) async throws

    // MARK: What the intake and the runner look up

    /// How the job of this version of a source ended, or `nil` when it has no completed, failed or cancelled job.
    func outcome(of source: FilePath, fingerprint: SourceFingerprint) async throws -> StoredOutcome?

    /// The outputs of completed jobs of `rule` whose source had `size` bytes, with the source's SHA-256: the
    /// candidates an identical source would duplicate.
    func completedOutputs(rule: String, sourceSize size: Int64) async throws -> [(output: FilePath, sha256: String)]

    /// Whether the file at `path` with inode `inode` is an output Chute wrote (being committed or completed, in that
    /// folder, under that name once completed).
    func isOutput(_ path: FilePath, inode: UInt64) async throws -> Bool

    /// The completed, failed or cancelled group job of `rule` on the folder `folder` (its device and inode), or `nil`.
    func groupOutcome(of folder: FilePath, device: UInt64, inode: UInt64, rule: String) async throws -> StoredGroup?

    /// The model's estimate and the CPU time taken of the latest `window` completed jobs of each rule and engine, each
    /// key's oldest first: what ``CostHistory`` starts from.
    func costSamples(window: Int) async throws -> [CostHistory.Key: [CostHistory.Sample]]

    // MARK: Recovery

    /// The jobs a stopped daemon left unfinished (`queued`, `running`, `interrupted` or `committing`), oldest first.
    func unfinishedJobs() async throws -> [UnfinishedJob]

    /// Records what recovery decided for unfinished jobs, in one transaction, after it did the file work they needed.
    func settle(_ actions: [RecoveryAction]) async throws

    /// Records finished jobs of earlier runs that the store does not know (from their sidecars), in one transaction.
    ///
    /// - Returns: how many were recorded.
    func restore(_ jobs: [RestoredJob]) async throws -> Int

    // MARK: History

    /// Finished jobs matching `filter`, the latest first.
    func history(_ filter: JobHistoryFilter) async throws -> [JobHistoryEntry]

    /// The job with this id, in whatever state, or `nil`.
    func entry(_ jobID: String) async throws -> JobHistoryEntry?

    /// How many jobs the store holds in each state.
    func countsByState() async throws -> [String: Int]

    /// The latest failed job of each source still in place (not quarantined), of `rule` if given.
    func failedJobs(rule: String?) async throws -> [JobHistoryEntry]

    /// Records that a failed or cancelled job was queued again on request (`retried`, history only).
    ///
    /// - Returns: `false` when the job is not (or no longer) failed or cancelled.
    func markRetried(_ jobID: String) async throws -> Bool

    /// Records where a failed job's source was moved by its rule's quarantine.
    func quarantined(_ jobID: String, at path: FilePath) async throws

    /// The quarantined files that a source may have come back from, of which nothing is left in quarantine; their
    /// records are cleared.
    func leftQuarantine(_ source: FilePath, fingerprint: SourceFingerprint) async throws -> [FilePath]

    /// Deletes the finished jobs last updated before `cutoff` whose source has gone or changed since.
    ///
    /// - Returns: how many went.
    func pruneHistory(before cutoff: Date) async throws -> Int

    // MARK: Kept notifications

    /// Keeps a notification its target did not take, to be sent when it answers again.
    func keepNotification(kind: String, url: String, event: String, payload: Data) async throws

    /// The notifications kept for a target, the oldest first.
    func keptNotifications(kind: String, url: String) async throws -> [KeptNotification]

    /// Forgets a kept notification once it was sent.
    func forgetNotification(_ id: Int64) async throws
}

extension JobStore {
    package func confirmHeld(_ jobID: String, askingStore: Bool) async throws {}
}

/// How a store was found when it was opened: one created or replaced knows nothing of earlier runs until
/// ``JobStore/restore(_:)`` gives it what their sidecars say.
package enum StoreOrigin: Sendable, Equatable {
    /// It was there and readable.
    case existing
    /// There was none: a first start, a journal removed since the last run, or a new database.
    case created
    /// The journal was there but SQLite found it damaged (not a database, or corrupt): it was moved aside to this
    /// path, with its `-wal` and `-shm` files, and a new one was created.
    case replacedDamaged(movedTo: FilePath)
}

/// Where a job stands in the store.
package enum JobState: String, Sendable {
    /// `cancelled`: stopped by a request; `retried`: failed, then queued again by a request (history only).
    case queued, running, committing, completed, failed, interrupted, cancelled, retried

    /// The states of jobs that are over, which the history lists (live ones are the status board's).
    package static let history = ["completed", "failed", "cancelled", "retried"]
}

/// Where a job came from, which decides what becomes of its source once it ends (``JobCompletionSink``).
package enum JobOrigin: String, Sendable, Codable, Equatable {
    /// A file in a watched folder: found by the watcher, or queued or retried on request through the API. Its rule's
    /// `source` and `quarantine` apply once it ends.
    case watched
    /// `chute convert`: its source is left alone whatever the outcome.
    case command
    /// A file uploaded through the API into the spool (``UploadSpool``): the spool keeps it, its outputs and sidecar
    /// until `uploadRetention` after the job ended, and a restart submits it again with the same id.
    case upload
}

/// How an earlier job ended for a source.
package enum StoredOutcome: Sendable, Equatable {
    /// Completed, with the output it put in place.
    case completed(output: FilePath)
    /// Failed; `nil` for a row written before failures were recorded.
    case failed(ConversionFailure?)
    /// Cancelled on request.
    case cancelled
}

/// One part of a job with several outputs, as its `committing` record keeps it.
package struct OutputPartRecord: Sendable, Codable, Equatable {
    package var label: String
    package var inode: UInt64

    package init(label: String, inode: UInt64) {
        self.label = label
        self.inode = inode
    }
}

/// The group job a rule ran on a folder, as the store last recorded it.
package struct StoredGroup: Sendable, Equatable {
    package var jobID: String
    package var outcome: StoredOutcome
    /// The files it took, in order.
    package var members: [GroupMember]

    package init(jobID: String, outcome: StoredOutcome, members: [GroupMember]) {
        self.jobID = jobID
        self.outcome = outcome
        self.members = members
    }
}

/// A job that a stopped daemon left unfinished, as the store recorded it.
package struct UnfinishedJob: Sendable, Equatable {
    /// How far it got.
    package enum Stage: Sendable, Equatable {
        /// Accepted, not started.
        case queued
        /// Converting, or stopped by shutdown while converting: nothing of it was published.
        case converting
        /// Its output was converted and synced under a temporary name, perhaps renamed into place since.
        case committing(CommitRecord)
    }

    package var id: String
    package var source: FilePath
    package var rule: String
    package var origin: JobOrigin
    package var stage: Stage

    package init(id: String, source: FilePath, rule: String, origin: JobOrigin, stage: Stage) {
        self.id = id
        self.source = source
        self.rule = rule
        self.origin = origin
        self.stage = stage
    }
}

/// What a `committing` job recorded before its output's rename: enough to find the output after a kill and finish it.
package struct CommitRecord: Sendable, Equatable {
    /// The folder the output was renamed into.
    package var outputFolder: FilePath
    /// The output's inode (the first part's, for a set), which the rename keeps.
    package var outputInode: UInt64
    /// Each part's label and inode, for a job with several outputs.
    package var parts: [OutputPartRecord]?
    /// The sidecar to write, its output still to be filled in; `nil` when the record cannot be read.
    package var sidecar: Sidecar?
    /// The folder its sidecar goes to, or `nil` for beside the output.
    package var sidecarFolder: FilePath?
    /// Whether the rule writes a sidecar for a completed job.
    package var writesSidecar: Bool

    package init(
        outputFolder: FilePath,
        outputInode: UInt64,
        parts: [OutputPartRecord]?,
        sidecar: Sidecar?,
        sidecarFolder: FilePath?,
        writesSidecar: Bool
    ) {
        self.outputFolder = outputFolder
        self.outputInode = outputInode
        self.parts = parts
        self.sidecar = sidecar
        self.sidecarFolder = sidecarFolder
        self.writesSidecar = writesSidecar
    }
}

/// What recovery decided for one unfinished job, for ``JobStore/settle(_:)`` to record once its file work is done.
package enum RecoveryAction: Sendable, Equatable {
    /// Nothing of it is in place: its record goes, and its file is taken again as a new one (a watched file is found
    /// by the first scan).
    case rerun(jobID: String)
    /// Its output is in place (and its sidecar written): it completed.
    case complete(jobID: String, output: FilePath, sidecar: FilePath?)
    /// Nothing of it is in place, and only its record knows the file (an upload in the spool): it stays, `queued`,
    /// and is submitted again with the same id, so that its ticket still answers.
    case resubmit(jobID: String)
}

/// What ``JobRecovery`` settled, for the log.
package struct RecoverySummary: Sendable, Equatable {
    /// Jobs accepted but not started: their files are taken again.
    package var queued = 0
    /// Jobs of uploaded files that had not completed: they are submitted again, with the same ids.
    package var resubmitted: [String] = []
    /// Jobs that were converting, or that shutdown cancelled: they run again.
    package var interrupted = 0
    /// Jobs whose output was renamed into place before the kill: completed now, with their sidecar.
    package var completed = 0
    /// Jobs stopped before their output was renamed into place: they run again.
    package var unpublished = 0
    /// Jobs with several outputs stopped between the renames of their set: the parts in place were removed, and
    /// they run again.
    package var withdrawn = 0

    package init() {}
}

/// A finished job of an earlier run, as its sidecar tells it, for a store that lost it (``JobStore/restore(_:)``).
package struct RestoredJob: Sendable, Equatable {
    package var id: String
    package var rule: String
    package var source: FilePath
    /// The source's fingerprint now, when it is still the file the sidecar describes; `nil` when it is gone or
    /// changed, so that the record never matches a source (it still records the output).
    package var fingerprint: SourceFingerprint?
    package var sourceSize: Int64
    package var sha256: String?
    /// `completed`, `failed` or `cancelled`.
    package var status: Sidecar.Status
    package var failure: ConversionFailure?
    package var output: FilePath?
    /// The output's inode, when it is still there: what ``JobStore/isOutput(_:inode:)`` looks for.
    package var outputInode: UInt64?
    /// The folder the job wrote to: the output's, or for a failed job the sidecar's.
    package var outputFolder: FilePath
    package var sidecar: FilePath
    package var startedAt: Date?
    package var endedAt: Date?

    package init(
        id: String,
        rule: String,
        source: FilePath,
        fingerprint: SourceFingerprint?,
        sourceSize: Int64,
        sha256: String?,
        status: Sidecar.Status,
        failure: ConversionFailure?,
        output: FilePath?,
        outputInode: UInt64?,
        outputFolder: FilePath,
        sidecar: FilePath,
        startedAt: Date?,
        endedAt: Date?
    ) {
        self.id = id
        self.rule = rule
        self.source = source
        self.fingerprint = fingerprint
        self.sourceSize = sourceSize
        self.sha256 = sha256
        self.status = status
        self.failure = failure
        self.output = output
        self.outputInode = outputInode
        self.outputFolder = outputFolder
        self.sidecar = sidecar
        self.startedAt = startedAt
        self.endedAt = endedAt
    }
}

/// One job as the store remembers it, for the status API's history.
package struct JobHistoryEntry: Sendable, Equatable {
    package var id: String
    package var source: FilePath
    package var rule: String
    /// One of ``JobState``'s raw values.
    package var state: String
    package var output: FilePath?
    package var failureCode: String?
    package var failureMessage: String?
    package var sidecar: FilePath?
    /// Where the source was moved by its rule's quarantine, for a failed job.
    package var quarantine: FilePath?
    package var startedAt: Date?
    package var updatedAt: Date
    /// In a store that agents share: the agent that holds or ran the job.
    package var agent: String?

    package init(
        id: String,
        source: FilePath,
        rule: String,
        state: String,
        output: FilePath?,
        failureCode: String?,
        failureMessage: String?,
        sidecar: FilePath?,
        quarantine: FilePath?,
        startedAt: Date?,
        updatedAt: Date,
        agent: String? = nil
    ) {
        self.agent = agent
        self.id = id
        self.source = source
        self.rule = rule
        self.state = state
        self.output = output
        self.failureCode = failureCode
        self.failureMessage = failureMessage
        self.sidecar = sidecar
        self.quarantine = quarantine
        self.startedAt = startedAt
        self.updatedAt = updatedAt
    }
}

/// What ``JobStore/history(_:)`` returns.
package struct JobHistoryFilter: Sendable {
    /// Only jobs in this state.
    package var state: String?
    /// Only jobs of this rule.
    package var rule: String?
    /// Only jobs updated at or after this time.
    package var since: Date?
    /// Only jobs whose source path contains this text.
    package var text: String?
    package var limit = 50
    package var offset = 0

    package init(
        state: String? = nil,
        rule: String? = nil,
        since: Date? = nil,
        text: String? = nil,
        limit: Int = 50,
        offset: Int = 0
    ) {
        self.state = state
        self.rule = rule
        self.since = since
        self.text = text
        self.limit = limit
        self.offset = offset
    }
}

/// A notification that its target did not take after every try: kept until the target answers again.
package struct KeptNotification: Sendable, Equatable {
    package var id: Int64
    /// The target's kind (`url` or `ntfy`) and URL, as written in the rules file.
    package var kind: String
    package var url: String
    /// `failed`, `completed`, `cancelled` or `digest`.
    package var event: String
    /// The notification, as JSON.
    package var payload: Data
    package var keptAt: Date

    package init(id: Int64, kind: String, url: String, event: String, payload: Data, keptAt: Date) {
        self.id = id
        self.kind = kind
        self.url = url
        self.event = event
        self.payload = payload
        self.keptAt = keptAt
    }
}
