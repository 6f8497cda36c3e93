import ChuteCore
import Foundation
import GRDB
import SystemPackage

extension SQLiteJobStore {
    /// Finished jobs matching `filter`, the latest first.
    package func history(_ filter: JobHistoryFilter) async throws -> [JobHistoryEntry] {
        var conditions = ["state IN ('completed', 'failed', 'cancelled', 'retried')"]
        var arguments: StatementArguments = []
        if let state = filter.state {
            conditions.append("state = ?")
            arguments += [state]
        }
        if let rule = filter.rule {
            conditions.append("rule = ?")
            arguments += [rule]
        }
        if let since = filter.since {
            conditions.append("updatedAt >= ?")
            arguments += [since.timeIntervalSince1970]
        }
        if let text = filter.text {
            // Paths are stored as bytes: compared as bytes, so any file name can be searched for.
            conditions.append("instr(source, ?) > 0")
            arguments += [Data(text.utf8)]
        }
        arguments += [max(0, filter.limit), max(0, filter.offset)]
        let bound = arguments
        let sql = """
            SELECT * FROM job WHERE \(conditions.joined(separator: " AND "))
              ORDER BY updatedAt DESC, id LIMIT ? OFFSET ?
            """
        return try await self.readHistory { db in
            try Row.fetchAll(db, sql: sql, arguments: bound).map(Self.entry)
        }
    }

    /// The job with this id, or `nil`.
    package func entry(_ jobID: String) async throws -> JobHistoryEntry? {
        try await self.readHistory { db in
            try Row.fetchOne(db, sql: "SELECT * FROM job WHERE id = ?", arguments: [jobID]).map(Self.entry)
        }
    }

    /// How many jobs the journal holds in each state.
    package func countsByState() async throws -> [String: Int] {
        try await self.readHistory { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, COUNT(*) AS count FROM job GROUP BY state") {
                counts[row["state"]] = row["count"]
            }
            return counts
        }
    }

    /// The latest failed job of each source still in place (not quarantined), of `rule` if given: what "retry all
    /// failed" queues again.
    package func failedJobs(rule: String?) async throws -> [JobHistoryEntry] {
        try await self.readHistory { db in
            let rows = try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM job WHERE state = 'failed' AND quarantine IS NULL AND (? IS NULL OR rule = ?)
                      AND updatedAt = (SELECT MAX(updatedAt) FROM job AS later WHERE later.source = job.source)
                    ORDER BY updatedAt
                    """,
                arguments: [rule, rule]
            )
            return rows.map(Self.entry)
        }
    }

    /// Records that a failed or cancelled job was queued again on request: its row leaves the failed and cancelled
    /// jobs (so the intake takes the same version of its source again) and stays in the history as `retried`.
    ///
    /// - Returns: `false` when the job is not (or no longer) failed or cancelled.
    package func markRetried(_ jobID: String) async throws -> Bool {
        try await self.writeHistory { db in
            try db.execute(
                sql: """
                    UPDATE job SET state = 'retried', updatedAt = ? WHERE id = ? AND state IN ('failed', 'cancelled')
                    """,
                arguments: [Date().timeIntervalSince1970, jobID]
            )
            return db.changesCount > 0
        }
    }

    /// Records where a failed job's source was moved by its rule's quarantine.
    package func quarantined(_ jobID: String, at path: FilePath) async throws {
        try await self.writeHistory { db in
            try db.execute(sql: "UPDATE job SET quarantine = ? WHERE id = ?", arguments: [path.bytes, jobID])
        }
    }

    /// The quarantined files that a source may have come back from: those of its path, or of its inode (a move keeps
    /// it), of which nothing is left in quarantine. Their records are cleared.
    ///
    /// - Returns: where each such file was in quarantine.
    package func leftQuarantine(_ source: FilePath, fingerprint: SourceFingerprint) async throws -> [FilePath] {
        // A read first: the write (and its sync) only for the rare file that was quarantined.
        let arguments: StatementArguments = [
            source.bytes, Int64(bitPattern: fingerprint.inode), Int64(bitPattern: fingerprint.device),
        ]
        let candidates = try await self.readHistory { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, quarantine FROM job WHERE quarantine IS NOT NULL
                      AND (source = ? OR (inode = ? AND device = ?))
                    """,
                arguments: arguments
            ).compactMap { row -> (id: String, path: FilePath)? in
                Self.historyPath(row["quarantine"]).map { (row["id"], $0) }
            }
        }
        let left = candidates.filter { (try? SourceInspector.status(of: $0.path)) == nil }
        guard !left.isEmpty else { return [] }
        try await self.writeHistory { db in
            for job in left {
                try db.execute(sql: "UPDATE job SET quarantine = NULL WHERE id = ?", arguments: [job.id])
            }
        }
        return left.map(\.path)
    }

    /// Deletes the finished jobs last updated before `cutoff` whose source has gone or changed since, and returns how
    /// many went. A row whose source is still there as it was stays, whatever its age: it is what keeps that file
    /// from being converted again (``outcome(of:fingerprint:)``), and a group's row stays while its folder does.
    package func pruneHistory(before cutoff: Date) async throws -> Int {
        let candidates = try await self.readHistory { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, source, device, inode, size, modified, changed, state, members FROM job
                    WHERE state IN ('completed', 'failed', 'cancelled', 'retried') AND updatedAt < ?
                    """,
                arguments: [cutoff.timeIntervalSince1970]
            ).map(Self.finishedRecord)
        }
        guard !candidates.isEmpty else { return 0 }
        let gone = await FinishedJobRecord.prunable(candidates)
        var deleted = 0
        // In slices, so that no single write holds the journal for long.
        for start in stride(from: 0, to: gone.count, by: 500) {
            let slice = Array(gone[start..<min(start + 500, gone.count)])
            deleted += try await self.writeHistory { db in
                let marks = Array(repeating: "?", count: slice.count).joined(separator: ", ")
                try db.execute(
                    sql: "DELETE FROM job WHERE id IN (\(marks)) AND updatedAt < ?",
                    arguments: StatementArguments(slice + [cutoff.timeIntervalSince1970])
                )
                return db.changesCount
            }
        }
        return deleted
    }

    /// A finished job's row as ``pruneHistory(before:)`` weighs it.
    private static func finishedRecord(_ row: Row) -> FinishedJobRecord {
        let changed: Int64? = row["changed"]
        return FinishedJobRecord(
            id: row["id"],
            source: Self.historyPath(row["source"]) ?? FilePath(),
            fingerprint: SourceFingerprint(
                device: UInt64(bitPattern: row["device"]),
                inode: UInt64(bitPattern: row["inode"]),
                size: row["size"],
                modifiedNanoseconds: row["modified"],
                changedNanoseconds: changed ?? 0
            ),
            matchesInode: true,
            hasChangeTime: changed != nil,
            isHistoryOnly: (row["state"] as String) == JobState.retried.rawValue,
            isGroup: (row["members"] as Data?) != nil
        )
    }

    private static func entry(_ row: Row) -> JobHistoryEntry {
        JobHistoryEntry(
            id: row["id"],
            source: Self.historyPath(row["source"]) ?? FilePath(),
            rule: row["rule"],
            state: row["state"],
            output: Self.historyPath(row["output"]),
            failureCode: row["failureCode"],
            failureMessage: row["failureMessage"],
            sidecar: Self.historyPath(row["sidecarPath"]),
            quarantine: Self.historyPath(row["quarantine"]),
            startedAt: (row["startedAt"] as Double?).map(Date.init(timeIntervalSince1970:)),
            updatedAt: Date(timeIntervalSince1970: row["updatedAt"])
        )
    }

    private static func historyPath(_ data: Data?) -> FilePath? {
        guard let data, !data.isEmpty else { return nil }
        return FilePath(bytes: data)
    }
}
