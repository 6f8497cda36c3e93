import ChuteCore
import ChuteRuntime
import Foundation
import PostgresNIO
import SystemPackage

extension PostgresJobStore {
    package func history(_ filter: JobHistoryFilter) async throws -> [JobHistoryEntry] {
        var conditions = ["state IN ('completed', 'failed', 'cancelled', 'retried')"]
        var binds = PostgresBindings()
        if let state = filter.state {
            binds.append(state)
            conditions.append("state = $\(binds.count)")
        }
        if let rule = filter.rule {
            binds.append(rule)
            conditions.append("rule = $\(binds.count)")
        }
        if let since = filter.since {
            binds.append(since.timeIntervalSince1970)
            conditions.append("updated_at >= $\(binds.count)")
        }
        if let text = filter.text {
            // Paths are stored as bytes: compared as bytes, so any file name can be searched for.
            try binds.append(Data(text.utf8))
            conditions.append("position($\(binds.count) IN source) > 0")
        }
        binds.append(max(0, filter.limit))
        binds.append(max(0, filter.offset))
        let sql = """
            SELECT * FROM job WHERE \(conditions.joined(separator: " AND "))
            ORDER BY updated_at DESC, id LIMIT $\(binds.count - 1) OFFSET $\(binds.count)
            """
        return try await self.rows(PostgresQuery(unsafeSQL: sql, binds: binds)).map(Self.entry)
    }

    package func entry(_ jobID: String) async throws -> JobHistoryEntry? {
        try await self.rows("SELECT * FROM job WHERE id = \(jobID)").first.map(Self.entry)
    }

    package func countsByState() async throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for row in try await self.rows("SELECT state, COUNT(*) AS count FROM job GROUP BY state") {
            counts[try row["state"].decode(String.self)] = Int(try row["count"].decode(Int64.self))
        }
        return counts
    }

    package func failedJobs(rule: String?) async throws -> [JobHistoryEntry] {
        try await self.rows(
            """
            SELECT * FROM job WHERE state = 'failed' AND quarantine IS NULL
              AND (\(rule)::text IS NULL OR rule = \(rule))
              AND updated_at = (SELECT MAX(updated_at) FROM job AS later WHERE later.source = job.source)
            ORDER BY updated_at
            """
        ).map(Self.entry)
    }

    package func markRetried(_ jobID: String) async throws -> Bool {
        try await !self.write(
            """
            UPDATE job SET state = 'retried', updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND state IN ('failed', 'cancelled') RETURNING id
            """
        ).isEmpty
    }

    package func quarantined(_ jobID: String, at path: FilePath) async throws {
        try await self.write("UPDATE job SET quarantine = \(Self.bytes(path)) WHERE id = \(jobID)")
    }

    package func leftQuarantine(_ source: FilePath, fingerprint: SourceFingerprint) async throws -> [FilePath] {
        let candidates = try await self.rows(
            """
            SELECT id, quarantine FROM job WHERE quarantine IS NOT NULL
              AND (source = \(Self.bytes(source))
                OR (inode = \(Int64(bitPattern: fingerprint.inode)) AND device = \(Int64(bitPattern: fingerprint.device))))
            """
        ).compactMap { row -> (id: String, path: FilePath)? in
            guard let path = try Self.optionalPath(row["quarantine"]) else { return nil }
            return (try row["id"].decode(String.self), path)
        }
        guard !candidates.isEmpty else { return [] }
        let left = await Blocking.run { candidates.filter { (try? SourceInspector.status(of: $0.path)) == nil } }
        guard !left.isEmpty else { return [] }
        try await self.write("UPDATE job SET quarantine = NULL WHERE id = ANY(\(left.map(\.id)))")
        return left.map(\.path)
    }

    package func pruneHistory(before cutoff: Date) async throws -> Int {
        let candidates = try await self.rows(
            """
            SELECT id, source, device, inode, size, modified, changed, state, members IS NOT NULL AS grouped FROM job
            WHERE state IN ('completed', 'failed', 'cancelled', 'retried')
              AND updated_at < \(cutoff.timeIntervalSince1970)
            """
        ).map { row in
            let changed = try row["changed"].decode(Int64?.self)
            return FinishedJobRecord(
                id: try row["id"].decode(String.self),
                source: try Self.path(row["source"]),
                fingerprint: SourceFingerprint(
                    device: UInt64(bitPattern: try row["device"].decode(Int64.self)),
                    inode: UInt64(bitPattern: try row["inode"].decode(Int64.self)),
                    size: try row["size"].decode(Int64.self),
                    modifiedNanoseconds: try row["modified"].decode(Int64.self),
                    changedNanoseconds: changed ?? 0
                ),
                matchesInode: false,
                hasChangeTime: changed != nil,
                isHistoryOnly: try row["state"].decode(String.self) == JobState.retried.rawValue,
                isGroup: try row["grouped"].decode(Bool.self)
            )
        }
        guard !candidates.isEmpty else { return 0 }
        let gone = await FinishedJobRecord.prunable(candidates)
        var deleted = 0
        // In slices, so that no single statement holds many rows' locks for long.
        for start in stride(from: 0, to: gone.count, by: 500) {
            let slice = Array(gone[start..<min(start + 500, gone.count)])
            deleted += try await self.write(
                """
                DELETE FROM job WHERE id = ANY(\(slice)) AND updated_at < \(cutoff.timeIntervalSince1970) RETURNING id
                """
            ).count
        }
        return deleted
    }

    // MARK: Kept notifications

    package func keepNotification(kind: String, url: String, event: String, payload: Data) async throws {
        try await self.write(
            """
            INSERT INTO notification (kind, url, event, payload, kept_at)
            VALUES (\(kind), \(url), \(event), \(payload), \(Date().timeIntervalSince1970))
            """
        )
    }

    package func keptNotifications(kind: String, url: String) async throws -> [KeptNotification] {
        try await self.rows(
            "SELECT id, kind, url, event, payload, kept_at FROM notification WHERE kind = \(kind) AND url = \(url) ORDER BY id"
        ).map { row in
            KeptNotification(
                id: try row["id"].decode(Int64.self),
                kind: try row["kind"].decode(String.self),
                url: try row["url"].decode(String.self),
                event: try row["event"].decode(String.self),
                payload: try row["payload"].decode(Data.self),
                keptAt: Date(timeIntervalSince1970: try row["kept_at"].decode(Double.self))
            )
        }
    }

    package func forgetNotification(_ id: Int64) async throws {
        try await self.write("DELETE FROM notification WHERE id = \(id)")
    }

    private static func entry(_ row: PostgresRandomAccessRow) throws -> JobHistoryEntry {
        JobHistoryEntry(
            id: try row["id"].decode(String.self),
            source: try Self.path(row["source"]),
            rule: try row["rule"].decode(String.self),
            state: try row["state"].decode(String.self),
            output: try Self.optionalPath(row["output"]),
            failureCode: try row["failure_code"].decode(String?.self),
            failureMessage: try row["failure_message"].decode(String?.self),
            sidecar: try Self.optionalPath(row["sidecar_path"]),
            quarantine: try Self.optionalPath(row["quarantine"]),
            startedAt: try row["started_at"].decode(Double?.self).map(Date.init(timeIntervalSince1970:)),
            updatedAt: Date(timeIntervalSince1970: try row["updated_at"].decode(Double.self)),
            agent: try row["agent"].decode(String?.self)
        )
    }
}
