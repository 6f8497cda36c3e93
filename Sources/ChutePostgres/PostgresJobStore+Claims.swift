import ChuteCore
import ChuteRuntime
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The queue the agents share: offers deduplicated by the version of their source, claims in the scheduler's order
/// with `FOR UPDATE SKIP LOCKED`, leases on the server's clock, and notifications on ``PostgresSchema/workChannel``.
extension PostgresJobStore: SharedQueue {
    /// The columns of a job given back to the queue, for any agent to claim.
    static let requeued =
        "state = 'queued', agent = NULL, lease_token = NULL, lease_until = NULL, started_at = NULL, "
        + "queued_at = EXTRACT(EPOCH FROM now())"

    package func offer(_ job: Job, cost: Double) async throws -> SharedOffer {
        let fingerprint = job.fingerprint
        let rows = try await self.write(
            """
            INSERT INTO job (id, source, device, inode, size, modified, changed, rule, state, output_folder, origin,
              updated_at, lane, estimated_cost, queued_at, root, found_by)
            VALUES (\(job.id), \(Self.bytes(job.source)), \(Int64(bitPattern: fingerprint.device)),
              \(Int64(bitPattern: fingerprint.inode)), \(fingerprint.size), \(fingerprint.modifiedNanoseconds),
              \(fingerprint.changedNanoseconds), \(job.rule.name), 'queued', \(Self.bytes(job.plan.directory)),
              \(job.origin.rawValue), \(Date().timeIntervalSince1970), \(job.engine.rawValue), \(cost),
              EXTRACT(EPOCH FROM now()), \(Self.bytes(job.root)), \(self.agent))
            ON CONFLICT (rule, source, size, modified) WHERE state <> 'retried' AND modified <> -1
            DO UPDATE SET updated_at = job.updated_at
            RETURNING id, state, xmax = 0 AS inserted
            """
        )
        guard let row = rows.first else { throw PostgresStoreError("the store did not answer the offer of \(job.id)") }
        let id = try row["id"].decode(String.self)
        if try row["inserted"].decode(Bool.self) { try await self.notifyWork() }
        switch try row["state"].decode(String.self) {
        case JobState.completed.rawValue, JobState.failed.rawValue, JobState.cancelled.rawValue:
            return .over(id: id)
        default:
            return .live(id: id)
        }
    }

    package func claim(
        among ids: [String],
        foundElsewhere rules: [String],
        excluding excluded: [String],
        limits: [EngineKind: Int],
        agingLimit: Duration
    ) async throws -> [SharedClaim] {
        var claimed: [SharedClaim] = []
        let lease = Self.seconds(self.lease)
        let aged = Self.seconds(agingLimit)
        for (engine, limit) in limits.sorted(by: { $0.key.rawValue < $1.key.rawValue }) where limit > 0 {
            let rows = try await self.write(
                """
                UPDATE job SET agent = \(self.agent), lease_token = nextval('chute_lease_token'),
                  lease_until = now() + make_interval(secs => \(lease)), updated_at = \(Date().timeIntervalSince1970),
                  handoff_key = gen_random_uuid()::text
                WHERE id IN (
                  SELECT id FROM job
                  WHERE state = 'queued' AND agent IS NULL AND lane = \(engine.rawValue)
                    AND (id = ANY(\(ids)) OR (rule = ANY(\(rules)) AND origin = 'watched' AND members IS NULL
                      AND root IS NOT NULL))
                    AND id <> ALL(\(excluded))
                  ORDER BY queued_at <= EXTRACT(EPOCH FROM now()) - \(aged) DESC, estimated_cost, queued_at, id
                  LIMIT \(limit) FOR UPDATE SKIP LOCKED
                )
                RETURNING id, lease_token, source, root, rule, size, modified, handoff_key, found_by,
                  (SELECT url FROM agent WHERE agent.name = job.found_by AND job.found_by <> \(self.agent)) AS owner_url
                """
            )
            let now = ContinuousClock.now
            for row in rows {
                let (id, token) = (try row["id"].decode(String.self), try row["lease_token"].decode(Int64.self))
                self.held.withLock { $0[id] = (token, now) }
                claimed.append(
                    SharedClaim(
                        id: id,
                        token: token,
                        source: try Self.path(row["source"]),
                        root: try Self.optionalPath(row["root"]),
                        rule: try row["rule"].decode(String.self),
                        size: try row["size"].decode(Int64.self),
                        modifiedNanoseconds: try row["modified"].decode(Int64.self),
                        lane: engine,
                        handoff: try row["owner_url"].decode(String?.self).map { url in
                            HandoffTicket(
                                owner: try row["found_by"].decode(String.self),
                                url: url,
                                key: try row["handoff_key"].decode(String.self)
                            )
                        }
                    )
                )
            }
        }
        return claimed
    }

    package func release(_ jobID: String) async throws {
        guard let token = self.token(of: jobID) else { return }
        try await self.write(
            """
            UPDATE job SET \(unescaped: Self.requeued), updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND lease_token = \(token) AND state = 'queued'
            """
        )
        self.letGo(jobID)
        try await self.notifyWork()
    }

    package func withdraw(_ jobID: String) async throws -> Bool {
        let reason = JobSubmitter.withdrawal
        return try await !self.write(
            """
            UPDATE job SET state = 'cancelled', failure_code = \(reason.code.rawValue),
              failure_message = \(reason.message), updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND state = 'queued' AND agent IS NULL
            RETURNING id
            """
        ).isEmpty
    }

    package func renew() async throws -> [String] {
        let held = self.held.withLock { $0 }
        let (ids, tokens) = (Array(held.keys), held.keys.map { held[$0]!.token })
        let lease = Self.seconds(self.lease)
        let started = ContinuousClock.now
        // Once, and no longer than a third of the lease: the heartbeat must notice a store that does not answer.
        let renewed = try await Self.within(self.lease / 3) {
            try await self.client.query(
                "UPDATE agent SET heartbeat = now() WHERE name = \(self.agent)",
                logger: self.logger
            )
            guard !ids.isEmpty else { return Set<String>() }
            return Set(
                try await self.client.query(
                    """
                    UPDATE job SET lease_until = now() + make_interval(secs => \(lease))
                    WHERE agent = \(self.agent)
                      AND (id, lease_token) IN (SELECT * FROM unnest(\(ids)::text[], \(tokens)::bigint[]))
                    RETURNING id
                    """,
                    logger: self.logger
                ).collect().map { try $0.makeRandomAccess()["id"].decode(String.self) }
            )
        }
        self.held.withLock { current in
            for id in renewed where current[id]?.token == held[id]?.token { current[id]?.renewed = started }
        }
        // Only the jobs still held now: one let go while the renewal ran is not lost.
        let stillHeld = self.held.withLock { current in Set(current.keys) }
        return ids.filter { !renewed.contains($0) && stillHeld.contains($0) }
    }

    package func reclaimExpired() async throws -> [(jobID: String, agent: String)] {
        let rows = try await self.write(
            """
            WITH expired AS (
              SELECT id, agent FROM job
              WHERE agent IS NOT NULL AND state IN ('queued', 'running') AND lease_until < now()
              FOR UPDATE SKIP LOCKED
            )
            UPDATE job SET \(unescaped: Self.requeued), updated_at = \(Date().timeIntervalSince1970)
            FROM expired WHERE job.id = expired.id
            RETURNING job.id, expired.agent
            """
        )
        let taken = try rows.map {
            (jobID: try $0["id"].decode(String.self), agent: try $0["agent"].decode(String.self))
        }
        if !taken.isEmpty { try await self.notifyWork() }
        return taken
    }

    package func takeOverCommits() async throws -> [(job: UnfinishedJob, agent: String)] {
        let rows = try await self.write(
            """
            WITH expired AS (
              SELECT id, agent FROM job
              WHERE state = 'committing' AND agent IS NOT NULL AND lease_until < now()
              FOR UPDATE SKIP LOCKED
            )
            UPDATE job SET agent = \(self.agent), lease_token = nextval('chute_lease_token'),
              lease_until = now() + make_interval(secs => \(Self.seconds(self.lease))),
              updated_at = \(Date().timeIntervalSince1970)
            FROM expired WHERE job.id = expired.id
            RETURNING \(unescaped: Self.unfinishedColumns.replacingOccurrences(of: "id, ", with: "job.id, ")),
              job.lease_token, expired.agent AS holder
            """
        )
        let now = ContinuousClock.now
        return try rows.map { row in
            let job = try Self.unfinished(row)
            let token = try row["lease_token"].decode(Int64.self)
            self.held.withLock { $0[job.id] = (token, now) }
            return (job, try row["holder"].decode(String.self))
        }
    }

    package func settled(among ids: [String]) async throws -> [String: StoredOutcome?] {
        let rows = try await self.rows(
            "SELECT id, state, output, failure_code, failure_message FROM job WHERE id = ANY(\(ids))"
        )
        var settled: [String: StoredOutcome?] = [:]
        var present = Set<String>()
        for row in rows {
            let id = try row["id"].decode(String.self)
            present.insert(id)
            switch try row["state"].decode(String.self) {
            case JobState.completed.rawValue, JobState.failed.rawValue, JobState.cancelled.rawValue:
                settled[id] = .some(try Self.storedOutcome(row))
            case JobState.retried.rawValue:
                settled[id] = .some(nil)
            default:
                continue
            }
        }
        for id in ids where !present.contains(id) { settled[id] = .some(nil) }
        return settled
    }

    package func agents() async throws -> [AgentStatus] {
        try await self.rows(
            """
            SELECT name, host, pid, engines, cpu, memory, EXTRACT(EPOCH FROM started_at)::float8 AS started,
              EXTRACT(EPOCH FROM heartbeat)::float8 AS beat,
              heartbeat > now() - make_interval(secs => \(Self.seconds(self.lease))) AS alive,
              (SELECT COUNT(*) FROM job WHERE job.agent = agent.name AND state IN ('queued', 'running', 'committing'))
                AS holding,
              (SELECT COUNT(*) FROM job WHERE job.agent = agent.name AND state = 'completed') AS completed
            FROM agent ORDER BY name
            """
        ).map { row in
            AgentStatus(
                name: try row["name"].decode(String.self),
                host: try row["host"].decode(String.self),
                pid: try row["pid"].decode(Int32.self),
                engines: try row["engines"].decode([String].self),
                cpu: Int(try row["cpu"].decode(Int32.self)),
                memory: try row["memory"].decode(Int64.self),
                startedAt: Date(timeIntervalSince1970: try row["started"].decode(Double.self)),
                heartbeat: Date(timeIntervalSince1970: try row["beat"].decode(Double.self)),
                alive: try row["alive"].decode(Bool.self),
                holding: Int(try row["holding"].decode(Int64.self)),
                completed: Int(try row["completed"].decode(Int64.self))
            )
        }
    }

    package func handoffGrant(_ jobID: String, token: Int64, key: String) async throws -> HandoffGrant? {
        let rows = try await self.rows(
            """
            SELECT source, root, rule, size, modified, output_folder, agent FROM job
            WHERE id = \(jobID) AND lease_token = \(token) AND handoff_key = \(key) AND lease_until > now()
              AND found_by = \(self.agent) AND root IS NOT NULL AND state IN ('queued', 'running', 'committing')
            """
        )
        return try rows.first.map { row in
            HandoffGrant(
                jobID: jobID,
                source: try Self.path(row["source"]),
                root: try Self.path(row["root"]),
                rule: try row["rule"].decode(String.self),
                size: try row["size"].decode(Int64.self),
                modifiedNanoseconds: try row["modified"].decode(Int64.self),
                outputFolder: try Self.path(row["output_folder"]),
                claimant: try row["agent"].decode(String.self)
            )
        }
    }

    package func recordSourceHash(_ jobID: String, sha256: String) async throws {
        try await self.write(
            "UPDATE job SET source_sha256 = \(sha256) WHERE id = \(jobID) AND found_by = \(self.agent) RETURNING id"
        )
    }

    package func sourceHash(of jobID: String) async throws -> String? {
        try await self.rows("SELECT source_sha256 FROM job WHERE id = \(jobID)").first?["source_sha256"].decode(
            String?.self
        )
    }

    package func letGo(_ jobID: String) {
        _ = self.held.withLock { $0.removeValue(forKey: jobID) }
    }

    package func notifications() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (configuration, logger) = (self.listenerConfiguration, self.logger)
        let listener = Task {
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: configuration,
                        id: 1,
                        logger: logger
                    )
                    defer { Task { try? await connection.close() } }
                    try await connection.listen(on: PostgresSchema.workChannel) { notifications in
                        // Reached (again): what was offered while the listener was away is looked at now.
                        continuation.yield()
                        for try await _ in notifications { continuation.yield() }
                    }
                } catch {
                    logger.debug("The store's notifications stopped", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        continuation.onTermination = { _ in listener.cancel() }
        return stream
    }

    package func confirmHeld(_ jobID: String, askingStore: Bool) async throws {
        guard let (token, renewed) = self.held.withLock({ $0[jobID] }) else { return }
        if askingStore {
            let rows = try await self.rows(
                "SELECT 1 FROM job WHERE id = \(jobID) AND lease_token = \(token) AND lease_until > now()"
            )
            guard !rows.isEmpty else {
                throw LeaseLost(jobID: jobID, why: "the store says its lease \(token) ran out or is another agent's")
            }
        }
        let since = ContinuousClock.now - renewed
        guard since < self.lease else {
            throw LeaseLost(
                jobID: jobID,
                why: "its lease was last renewed \(since.formatted(.units(allowed: [.seconds]))) ago, longer than "
                    + "agentLease (\(self.lease.formatted(.units(allowed: [.seconds])))): this agent was paused or "
                    + "cut off"
            )
        }
    }

    // MARK: Helpers

    /// The lease token of a job this agent holds, or `nil`.
    func token(of jobID: String) -> Int64? {
        self.held.withLock { $0[jobID]?.token }
    }

    /// Runs a write of one job's row that ends in `RETURNING id`, fenced by `token`.
    ///
    /// - Throws: ``LeaseLost`` when this agent holds the job (`token`) and the row did not take the write: the lease's
    ///   token is no longer the row's.
    func fenced(_ jobID: String, token: Int64?, _ query: PostgresQuery) async throws {
        let rows = try await self.write(query)
        if let token, rows.isEmpty {
            throw LeaseLost(jobID: jobID, why: "another agent holds it now: its lease \(token) is no longer the job's")
        }
    }

    /// Wakes the agents that wait for work.
    func notifyWork() async throws {
        try await self.write("SELECT pg_notify(\(PostgresSchema.workChannel), '')")
    }

    /// A duration in seconds, as PostgreSQL's `make_interval` takes it.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Runs `work`, or throws once `limit` passed.
    static func within<T: Sendable>(
        _ limit: Duration,
        _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else {
                throw PostgresStoreError("the store did not answer within \(limit)")
            }
            return value
        }
    }
}
