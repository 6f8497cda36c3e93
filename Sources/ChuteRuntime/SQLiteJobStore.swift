import ChuteCore
import Foundation
import GRDB
import Logging
import SystemPackage

/// The ``JobStore`` of a single daemon: the journal, a SQLite file (through GRDB) beside the rules.
///
/// Each job is one row, keyed by its id; paths are stored as their bytes, since file names need not be valid UTF-8.
/// A source is identified by its path and fingerprint (device, inode, size, modification and change time): rows written
/// before change times were recorded match on the rest of the fingerprint. Completed rows keep their source's SHA-256,
/// so that a rule can skip a source identical to one it converted (`onDuplicate`).
///
/// The database uses write-ahead logging with full synchronisation: a row written is on disk before the step it
/// records happens.
///
/// - Important: Every call waits on GRDB's own queues (one writer, readers beside it), never blocking Swift's
///   cooperative pool. A write, once asked for, is done even if the asking task is cancelled: shutdown cancels the
///   jobs whose end it records.
package final class SQLiteJobStore: JobStore {
    /// The database file.
    package let path: FilePath
    /// How the file was found: a journal created or replaced knows nothing of earlier runs until
    /// ``restore(_:)`` gives it what their sidecars say.
    package let origin: StoreOrigin
    /// A pool: reads (the intake's lookups, the status API's history) run on their own connections beside the one
    /// writer, in WAL mode, so that a page of history never waits for a job's synced write nor holds one up.
    private let database: DatabasePool

    /// Opens the journal at `path`, creating it (and its folder) if needed. A file SQLite finds damaged is moved aside
    /// (`journal.sqlite.damaged-TIME`) and a new journal is created in its place (``origin`` says so).
    ///
    /// - Throws: when the folder cannot be created or the database cannot be opened or migrated; the message names
    ///   the path.
    package init(path: FilePath) throws {
        do {
            try FileManager.default.createDirectory(
                atPath: path.removingLastComponent().string,
                withIntermediateDirectories: true
            )
            let existed = access(path.string, F_OK) == 0
            var origin: StoreOrigin = existed ? .existing : .created
            let database: DatabasePool
            do {
                database = try Self.open(path)
            } catch let error as DatabaseError where existed && Self.isDamage(error) {
                let stamp = Date().formatted(
                    Date.ISO8601FormatStyle(dateSeparator: .omitted, timeSeparator: .omitted)
                )
                let aside = FilePath(path.string + ".damaged-" + stamp)
                for suffix in ["", "-wal", "-shm"] where access(path.string + suffix, F_OK) == 0 {
                    guard rename(path.string + suffix, aside.string + suffix) == 0 else {
                        throw JournalError(
                            path: path,
                            cause: "it is damaged (\(error.message ?? "\(error)")) and cannot be moved aside: "
                                + "\(Errno(rawValue: errno))"
                        )
                    }
                }
                origin = .replacedDamaged(movedTo: aside)
                database = try Self.open(path)
            }
            self.database = database
            self.path = path
            self.origin = origin
        } catch let error as JournalError {
            throw error
        } catch {
            throw JournalError(path: path, cause: "\(error)")
        }
    }

    /// Opens (creating if needed) and migrates the database at `path`.
    private static func open(_ path: FilePath) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let database = try DatabasePool(path: path.string, configuration: configuration)
        try Self.migrator.migrate(database)
        return database
    }

    /// Whether SQLite says the file is not a database or is corrupt, rather than that it cannot be reached.
    private static func isDamage(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("jobs") { db in
            try db.create(table: "job") { table in
                table.primaryKey("id", .text)
                // Paths are stored as their bytes: file names need not be valid UTF-8.
                table.column("source", .blob).notNull().indexed()
                table.column("device", .integer).notNull()
                table.column("inode", .integer).notNull()
                table.column("size", .integer).notNull()
                table.column("modified", .integer).notNull()
                table.column("rule", .text).notNull()
                table.column("state", .text).notNull()
                table.column("outputFolder", .blob).notNull()
                table.column("outputInode", .integer)
                table.column("output", .blob)
                table.column("sidecar", .blob)
                table.column("updatedAt", .double).notNull()
            }
        }
        migrator.registerMigration("failures") { db in
            // Why a job failed, so that a restart can still quarantine its source.
            try db.alter(table: "job") { table in
                table.add(column: "failureCode", .text)
                table.add(column: "failureMessage", .text)
            }
        }
        migrator.registerMigration("changeTimes") { db in
            // The source's change time, part of its fingerprint; NULL in rows written before, which then match on
            // the rest of the fingerprint as they always did.
            try db.alter(table: "job") { table in
                table.add(column: "changed", .integer)
            }
        }
        migrator.registerMigration("duplicates and sidecar placement") { db in
            // The source's SHA-256, to find an identical source a rule already converted; where the sidecar of a job
            // being committed goes (NULL: beside the output), and whether it gets one, for recovery to honour.
            try db.alter(table: "job") { table in
                table.add(column: "sha256", .text)
                table.add(column: "sidecarFolder", .blob)
                table.add(column: "sidecarSkipped", .boolean).notNull().defaults(to: false)
            }
            try db.create(index: "job_rule_size", on: "job", columns: ["rule", "size"])
        }
        migrator.registerMigration("history") { db in
            // For the status API's history: where each finished job's sidecar is, and when the job started.
            try db.alter(table: "job") { table in
                table.add(column: "sidecarPath", .blob)
                table.add(column: "startedAt", .double)
            }
            try db.create(index: "job_updatedAt", on: "job", columns: ["updatedAt"])
        }
        migrator.registerMigration("output sets") { db in
            // The parts of a job with several outputs, as JSON [{label, inode}], so that recovery finds the whole set.
            try db.alter(table: "job") { table in
                table.add(column: "outputParts", .blob)
            }
        }
        migrator.registerMigration("groups") { db in
            // The files of a group job as JSON [GroupMember], in order: its `source` is the group's folder, so that a
            // restart knows which files the group took and which arrived after it.
            try db.alter(table: "job") { table in
                table.add(column: "members", .blob)
            }
        }
        migrator.registerMigration("costs") { db in
            // What a converted job was estimated to cost and the CPU time it took, with the engine that ran it: the
            // scheduler refines its estimates from them (CostHistory). NULL in rows written before, and for jobs
            // that converted nothing.
            try db.alter(table: "job") { table in
                table.add(column: "engine", .text)
                table.add(column: "estimatedCost", .double)
                table.add(column: "cpuSeconds", .double)
            }
        }
        migrator.registerMigration("quarantine") { db in
            // Where a failed job's source was moved by its rule's quarantine, so that the history shows it there and
            // its reason file can go once the file is moved back.
            try db.alter(table: "job") { table in
                table.add(column: "quarantine", .blob)
            }
            try db.execute(sql: "CREATE INDEX job_quarantined ON job(inode) WHERE quarantine IS NOT NULL")
        }
        migrator.registerMigration("kept notifications") { db in
            // Notifications that their target did not take after every try, sent when it answers again.
            try db.create(table: "notification") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("kind", .text).notNull()
                table.column("url", .text).notNull()
                table.column("event", .text).notNull()
                table.column("payload", .blob).notNull()
                table.column("keptAt", .double).notNull()
            }
        }
        migrator.registerMigration("queued jobs") { db in
            // Jobs are recorded from the moment they are accepted (`queued`), with where they came from (JobOrigin):
            // NULL in rows written before, which all came from watched folders.
            try db.alter(table: "job") { table in
                table.add(column: "origin", .text)
            }
        }
        return migrator
    }

    /// How the job of this version of a source ended, or `nil` when it has no completed or failed job.
    package func outcome(of source: FilePath, fingerprint: SourceFingerprint) async throws -> StoredOutcome? {
        try await self.database.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT state, output, failureCode, failureMessage FROM job WHERE source = ? AND device = ?
                      AND inode = ? AND size = ?
                      AND modified = ? AND (changed IS NULL OR changed = ?) AND state IN ('completed', 'failed', 'cancelled')
                    ORDER BY updatedAt DESC
                    """,
                arguments: [
                    source.bytes, Int64(bitPattern: fingerprint.device), Int64(bitPattern: fingerprint.inode),
                    fingerprint.size, fingerprint.modifiedNanoseconds, fingerprint.changedNanoseconds,
                ]
            )
            guard let row else { return nil }
            let state: String = row["state"]
            if state == JobState.cancelled.rawValue { return .cancelled }
            guard state == JobState.failed.rawValue else { return .completed(output: Self.path(row["output"])) }
            let code = (row["failureCode"] as String?).flatMap(ConversionFailure.Code.init(rawValue:))
            return .failed(code.map { ConversionFailure($0, row["failureMessage"] ?? "") })
        }
    }

    /// The outputs of completed jobs of `rule` whose source had `size` bytes, with the source's SHA-256: the
    /// candidates an identical source would duplicate. Rows written before hashes were recorded are left out.
    package func completedOutputs(
        rule: String,
        sourceSize size: Int64
    ) async throws -> [(
        output: FilePath, sha256: String
    )] {
        try await self.database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT output, sha256 FROM job WHERE rule = ? AND size = ? AND state = 'completed'
                      AND sha256 IS NOT NULL AND output IS NOT NULL
                    """,
                arguments: [rule, size]
            ).map { row in (output: Self.path(row["output"]), sha256: row["sha256"] as String) }
        }
    }

    /// Whether the file at `path` with inode `inode` is an output Chute wrote: the output (or a part) of a job that
    /// is being committed or completed, in that folder, under that name once the job completed. Chute never takes
    /// its own outputs as new inputs, nor lets `onConflict: overwrite` replace anything else in a watched folder.
    package func isOutput(_ path: FilePath, inode: UInt64) async throws -> Bool {
        try await self.database.read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM job WHERE outputFolder = ? AND state IN ('committing', 'completed')
                      AND ((outputInode = ? AND (output IS NULL OR output = ?))
                        OR (outputParts IS NOT NULL AND EXISTS (SELECT 1 FROM json_each(CAST(outputParts AS TEXT))
                          WHERE json_extract(value, '$.inode') = ?))))
                    """,
                arguments: [
                    path.removingLastComponent().bytes, Int64(bitPattern: inode), path.bytes,
                    Int64(bitPattern: inode),
                ]
            ) ?? false
        }
    }

    /// Records finished jobs of earlier runs that this journal does not know, in one transaction; a job whose id it
    /// has is left as it is.
    ///
    /// - Returns: how many were recorded.
    package func restore(_ jobs: [RestoredJob]) async throws -> Int {
        try await self.write { db in
            var restored = 0
            for job in jobs {
                let fingerprint = job.fingerprint
                try db.cachedStatement(
                    sql: """
                        INSERT OR IGNORE INTO job (id, source, device, inode, size, modified, changed, rule, state,
                          outputFolder, outputInode, output, sidecarPath, sha256, failureCode, failureMessage,
                          updatedAt, startedAt)
                          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: [
                        job.id, job.source.bytes, Int64(bitPattern: fingerprint?.device ?? 0),
                        Int64(bitPattern: fingerprint?.inode ?? 0), job.sourceSize,
                        fingerprint?.modifiedNanoseconds ?? -1, fingerprint?.changedNanoseconds, job.rule,
                        job.status.rawValue, job.outputFolder.bytes, job.outputInode.map { Int64(bitPattern: $0) },
                        job.output?.bytes, job.sidecar.bytes, job.sha256, job.failure?.code.rawValue,
                        job.failure?.message, (job.endedAt ?? Date()).timeIntervalSince1970,
                        job.startedAt?.timeIntervalSince1970,
                    ]
                )
                restored += db.changesCount
            }
            return restored
        }
    }

    /// Records a job that converted nothing because its source is identical to the source of `output`: it counts as
    /// completed with that output, so the same source is not taken again.
    package func skipDuplicate(_ jobID: String, of output: FilePath, sha256: String) async throws {
        try await self.update(
            jobID,
            sql: "state = 'completed', output = ?, sha256 = ?, sidecar = NULL",
            arguments: [output.bytes, sha256]
        )
    }

    package func accept(_ job: Job) async throws {
        try await self.record(job, state: .queued, startedAt: nil, members: nil)
    }

    /// Records that a job starts converting; a group job with its members.
    package func begin(_ job: Job) async throws {
        let members: Data? = try job.isGroup ? JSONEncoder().encode(job.members) : nil
        try await self.record(job, state: .running, startedAt: Date(), members: members)
    }

    /// Writes a job's row anew in `state`, with its source's fingerprint, its rule, folder and origin.
    private func record(_ job: Job, state: JobState, startedAt: Date?, members: Data?) async throws {
        try await self.write { db in
            try db.cachedStatement(
                sql: """
                    INSERT OR REPLACE INTO job (id, source, device, inode, size, modified, changed, rule, state,
                      outputFolder, origin, updatedAt, startedAt, members)
                      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """
            ).execute(
                arguments: [
                    job.id, job.source.bytes, Int64(bitPattern: job.fingerprint.device),
                    Int64(bitPattern: job.fingerprint.inode), job.fingerprint.size,
                    job.fingerprint.modifiedNanoseconds, job.fingerprint.changedNanoseconds, job.rule.name,
                    state.rawValue, job.plan.directory.bytes, job.origin.rawValue, Date().timeIntervalSince1970,
                    startedAt?.timeIntervalSince1970, members,
                ]
            )
        }
    }

    /// The completed, failed or cancelled group job of `rule` on the folder `folder` (this folder: its device and
    /// inode), or `nil` when it has none. Files added to the folder since do not make it another group: a folder is
    /// taken once.
    package func groupOutcome(
        of folder: FilePath,
        device: UInt64,
        inode: UInt64,
        rule: String
    ) async throws
        -> StoredGroup?
    {
        try await self.database.read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT id, state, output, failureCode, failureMessage, members FROM job WHERE source = ?
                      AND device = ? AND inode = ? AND rule = ? AND members IS NOT NULL
                      AND state IN ('completed', 'failed', 'cancelled')
                    ORDER BY updatedAt DESC
                    """,
                arguments: [folder.bytes, Int64(bitPattern: device), Int64(bitPattern: inode), rule]
            )
            guard let row else { return nil }
            let members = try JSONDecoder().decode([GroupMember].self, from: row["members"] as Data)
            let state: String = row["state"]
            let outcome: StoredOutcome
            if state == JobState.cancelled.rawValue {
                outcome = .cancelled
            } else if state == JobState.failed.rawValue {
                let code = (row["failureCode"] as String?).flatMap(ConversionFailure.Code.init(rawValue:))
                outcome = .failed(code.map { ConversionFailure($0, row["failureMessage"] ?? "") })
            } else {
                outcome = .completed(output: Self.path(row["output"]))
            }
            return StoredGroup(jobID: row["id"], outcome: outcome, members: members)
        }
    }

    /// Records that a job's output is converted and synced under its temporary name, with the inode that finds it
    /// after the rename and the sidecar to write for it (its output path is filled in then).
    ///
    /// - Parameters:
    ///   - parts: for a job with several outputs, each part's label and inode, in order (`outputInode` is the first's).
    ///   - sidecarFolder: the folder its sidecar goes to, or `nil` for beside the output.
    ///   - writesSidecar: `false` when the rule writes no sidecar for a completed job (`sidecars: failed-only`).
    ///   - cost: the engine that converted it, the model's estimate and the CPU time the conversion took, for
    ///     ``costSamples(window:)``.
    package func committing(
        _ jobID: String,
        outputInode: UInt64,
        parts: [OutputPartRecord]? = nil,
        sidecar: Sidecar,
        sidecarFolder: FilePath? = nil,
        writesSidecar: Bool = true,
        cost: (engine: EngineKind, sample: CostHistory.Sample)? = nil
    ) async throws {
        let encoded = try JSONEncoder().encode(sidecar)
        let encodedParts = try parts.map { try JSONEncoder().encode($0) }
        try await self.update(
            jobID,
            sql: """
                state = 'committing', outputInode = ?, sidecar = ?, sha256 = ?, sidecarFolder = ?, sidecarSkipped = ?,
                  outputParts = ?, engine = ?, estimatedCost = ?, cpuSeconds = ?
                """,
            arguments: [
                Int64(bitPattern: outputInode), encoded, sidecar.source.sha256, sidecarFolder.map(\.bytes),
                !writesSidecar, encodedParts, cost?.engine.rawValue, cost?.sample.estimate, cost?.sample.cpuSeconds,
            ]
        )
    }

    /// The model's estimate and the CPU time taken of the latest `window` completed jobs of each rule and engine,
    /// each key's oldest first: what ``CostHistory`` starts from.
    package func costSamples(
        window: Int = CostHistory.window
    ) async throws -> [CostHistory.Key: [CostHistory.Sample]] {
        try await self.database.read { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT rule, engine, estimatedCost, cpuSeconds FROM (
                      SELECT rule, engine, estimatedCost, cpuSeconds, updatedAt,
                        ROW_NUMBER() OVER (PARTITION BY rule, engine ORDER BY updatedAt DESC) AS latest
                      FROM job WHERE state = 'completed' AND engine IS NOT NULL AND estimatedCost > 0
                        AND cpuSeconds IS NOT NULL
                    ) WHERE latest <= ? ORDER BY updatedAt
                    """,
                arguments: [window]
            )
            var samples: [CostHistory.Key: [CostHistory.Sample]] = [:]
            for row in rows {
                let key = CostHistory.Key(rule: row["rule"], engine: EngineKind(rawValue: row["engine"]))
                samples[key, default: []].append(
                    CostHistory.Sample(estimate: row["estimatedCost"], cpuSeconds: row["cpuSeconds"])
                )
            }
            return samples
        }
    }

    /// Records that a job completed with `output` in place, and its sidecar at `sidecar` (`nil`: none written).
    package func finish(_ jobID: String, output: FilePath, sidecar: FilePath? = nil) async throws {
        try await self.update(
            jobID,
            sql: "state = 'completed', output = ?, sidecar = NULL, sidecarPath = ?",
            arguments: [output.bytes, sidecar.map(\.bytes)]
        )
    }

    /// Records that a job failed, and why, with its sidecar at `sidecar`.
    package func fail(_ jobID: String, failure: ConversionFailure, sidecar: FilePath? = nil) async throws {
        try await self.update(
            jobID,
            sql: "state = 'failed', sidecar = NULL, failureCode = ?, failureMessage = ?, sidecarPath = ?",
            arguments: [failure.code.rawValue, failure.message, sidecar.map(\.bytes)]
        )
    }

    /// Records that a request cancelled a running job, with its sidecar at `sidecar`: the same version of its source
    /// is not taken again.
    package func cancel(_ jobID: String, reason: ConversionFailure, sidecar: FilePath?) async throws {
        try await self.update(
            jobID,
            sql: "state = 'cancelled', sidecar = NULL, failureCode = ?, failureMessage = ?, sidecarPath = ?",
            arguments: [reason.code.rawValue, reason.message, sidecar.map(\.bytes)]
        )
    }

    /// Records that shutdown cancelled a job before its output was put in place, so that its file runs again at the
    /// next start.
    package func interrupt(_ jobID: String) async throws {
        try await self.update(jobID, sql: "state = 'interrupted'", arguments: [])
    }

    /// Forgets a job that was postponed, so that its file runs again.
    package func forget(_ jobID: String) async throws {
        try await self.write { db in
            try db.execute(sql: "DELETE FROM job WHERE id = ?", arguments: [jobID])
        }
    }

    private func update(_ jobID: String, sql: String, arguments: StatementArguments) async throws {
        try await self.write { db in
            // Each job makes the same few updates: compiled once per connection, not at every job.
            try db.cachedStatement(sql: "UPDATE job SET \(sql), updatedAt = ? WHERE id = ?")
                .execute(arguments: arguments + [Date().timeIntervalSince1970, jobID])
        }
    }

    package func unfinishedJobs() async throws -> [UnfinishedJob] {
        try await self.database.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, source, rule, state, origin, outputFolder, outputInode, sidecar, sidecarFolder,
                      sidecarSkipped, outputParts FROM job
                      WHERE state IN ('queued', 'running', 'interrupted', 'committing') ORDER BY updatedAt, id
                    """
            ).map { row in
                let state: String = row["state"]
                let stage: UnfinishedJob.Stage
                switch state {
                case JobState.queued.rawValue:
                    stage = .queued
                case JobState.committing.rawValue:
                    stage = .committing(
                        CommitRecord(
                            outputFolder: Self.path(row["outputFolder"]),
                            outputInode: UInt64(bitPattern: row["outputInode"] as Int64? ?? -1),
                            parts: (row["outputParts"] as Data?).map {
                                (try? JSONDecoder().decode([OutputPartRecord].self, from: $0)) ?? []
                            },
                            sidecar: (row["sidecar"] as Data?).flatMap {
                                try? JSONDecoder().decode(Sidecar.self, from: $0)
                            },
                            sidecarFolder: (row["sidecarFolder"] as Data?).map { Self.path($0) },
                            writesSidecar: row["sidecarSkipped"] as Bool? != true
                        )
                    )
                default:
                    stage = .converting
                }
                return UnfinishedJob(
                    id: row["id"],
                    source: Self.path(row["source"]),
                    rule: row["rule"],
                    origin: (row["origin"] as String?).flatMap(JobOrigin.init(rawValue:)) ?? .watched,
                    stage: stage
                )
            }
        }
    }

    package func settle(_ actions: [RecoveryAction]) async throws {
        guard !actions.isEmpty else { return }
        try await self.write { db in
            let now = Date().timeIntervalSince1970
            for action in actions {
                switch action {
                case .rerun(let id):
                    try db.execute(sql: "DELETE FROM job WHERE id = ?", arguments: [id])
                case .resubmit(let id):
                    try db.execute(
                        sql: "UPDATE job SET state = 'queued', updatedAt = ? WHERE id = ?",
                        arguments: [now, id]
                    )
                case .complete(let id, let output, let sidecar):
                    try db.execute(
                        sql: """
                            UPDATE job SET state = 'completed', output = ?, sidecar = NULL, sidecarPath = ?,
                              updatedAt = ? WHERE id = ?
                            """,
                        arguments: [output.bytes, sidecar?.bytes, now, id]
                    )
                }
            }
        }
    }

    /// Runs `updates` in a transaction on GRDB's writer queue and waits for it, without regard to cancellation.
    ///
    /// GRDB's async `write` throws `CancellationError` in a cancelled task, which would lose the very record that
    /// says a job was cancelled, or leave an output renamed into place unrecorded. The callback form it wraps here
    /// always runs, and is short.
    private func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            self.database.asyncWrite(updates) { _, result in continuation.resume(with: result) }
        }
    }

    /// Reads for the history (``SQLiteJobStore/history(_:)``), on a reader of the pool.
    func readHistory<T: Sendable>(_ value: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await self.database.read(value)
    }

    /// Writes for the history (``SQLiteJobStore/markRetried(_:)``), as every other write.
    func writeHistory<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await self.write(updates)
    }

    private static func path(_ data: Data?) -> FilePath {
        data.map(FilePath.init(bytes:)) ?? FilePath()
    }
}

/// The journal cannot be opened.
package struct JournalError: Error, CustomStringConvertible {
    package var path: FilePath
    package var cause: String

    package var description: String {
        "cannot open the journal \(self.path): \(self.cause); give a writable file with chute run --journal FILE"
    }
}
