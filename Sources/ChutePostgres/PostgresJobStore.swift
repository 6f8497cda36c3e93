import ChuteCore
import ChuteRuntime
import Foundation
import Logging
import NIOCore
import NIOSSL
import PostgresNIO
import Synchronization
import SystemPackage

/// The ``JobStore`` in a PostgreSQL database (`settings.store: postgres://…`): the same records as the journal's,
/// through PostgresNIO's connection pool.
///
/// A source is named by its path, size and modification time, never by its device and inode, which differ between
/// the machines that see one share; a group by its folder's path and rule. The schema is migrated at start, by one
/// agent at a time (``PostgresSchema``). Several agents share its queue (``SharedQueue``, in
/// PostgresJobStore+Claims.swift): each job's row says which agent holds it, under which lease, until when; every
/// write of a job this agent holds is fenced by the lease's token.
///
/// A statement that loses its connection (the server restarted, the network dropped) is tried again on a new one for
/// up to ``reconnectWindow``: every write is idempotent (an update of one job's row, or an insert of a row the store
/// does not have yet), so a write that committed before its answer was lost is the same when done again.
///
/// - Important: A write, once asked for, is done even if the asking task is cancelled (``JobStore``).
package final class PostgresJobStore: JobStore {
    /// How long a statement is tried again while its connection cannot be had.
    package static let reconnectWindow: Duration = .seconds(120)

    package let location: PostgresLocation
    /// Whether the database was new (``StoreOrigin/created``) or had a schema already.
    package let origin: StoreOrigin
    package let agent: String
    package var lease: Duration { self.location.lease }
    let client: PostgresClient
    let logger: Logger
    /// How the listener for the work channel connects.
    let listenerConfiguration: PostgresConnection.Configuration
    /// The jobs this agent holds: each one's lease token, and when its lease was last renewed on this agent's clock.
    let held = Mutex<[String: (token: Int64, renewed: ContinuousClock.Instant)]>([:])

    private init(
        location: PostgresLocation,
        origin: StoreOrigin,
        agent: String,
        client: PostgresClient,
        listenerConfiguration: PostgresConnection.Configuration,
        logger: Logger
    ) {
        self.location = location
        self.origin = origin
        self.agent = agent
        self.client = client
        self.listenerConfiguration = listenerConfiguration
        self.logger = logger
    }

    /// Connects to the database, migrates its schema, takes the lock on the agent's name, records the agent, and
    /// runs `body` with the store; the pool is closed when `body` returns or throws.
    ///
    /// A connection of its own comes first, so that a wrong password or an unknown database is said at once, with the
    /// server's message (the pool would try again for a minute, then say only that it gave up); it then holds the
    /// lock on the agent's name for as long as `body` runs.
    ///
    /// - Parameter agent: this agent, whose name ``PostgresLocation/agent`` gives (or the host name).
    /// - Throws: ``PostgresStoreError`` when the password cannot be read, the database cannot be reached or migrated,
    ///   or another agent of the same name runs on it; whatever `body` throws.
    package static func withStore<Result: Sendable>(
        at location: PostgresLocation,
        agent: AgentInfo,
        logger: Logger,
        _ body: (PostgresJobStore) async throws -> Result
    ) async throws -> Result {
        let failure = "cannot use the store \(location.description)"
        let password: String?
        do {
            password = try location.password()
        } catch {
            throw PostgresStoreError("\(failure): \(error)")
        }
        let connection: PostgresConnection
        let configuration: PostgresConnection.Configuration
        let before: Int32
        do {
            configuration = try Self.connectionConfiguration(location, password: password)
            connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
        } catch {
            throw PostgresStoreError(failure, cause: error)
        }
        do {
            before = try await PostgresSchema.migrate(connection, logger: logger)
            guard try await Self.takeAgentLock(agent.name, connection, logger: logger) else {
                throw PostgresStoreError(
                    "\(failure): an agent named '\(agent.name)' runs on this database already; give each agent its "
                        + "own name (settings.agent)"
                )
            }
            try await Self.register(agent, connection, logger: logger)
        } catch let error as PostgresStoreError {
            try? await connection.close()
            throw error.message.hasPrefix(failure) ? error : PostgresStoreError("\(failure): \(error.message)")
        } catch {
            try? await connection.close()
            throw PostgresStoreError(failure, cause: error)
        }
        var background = logger
        background[metadataKey: "store"] = "\(location.description)"
        let client = PostgresClient(
            configuration: Self.poolConfiguration(location, password: password),
            backgroundLogger: background
        )
        let store = PostgresJobStore(
            location: location,
            origin: before == 0 ? .created : .existing,
            agent: agent.name,
            client: client,
            listenerConfiguration: configuration,
            logger: logger
        )
        let result: Swift.Result<Result, any Error> = await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                return .success(try await body(store))
            } catch {
                return .failure(error)
            }
        }
        // The lock on the agent's name goes with its connection.
        try? await connection.close()
        return try result.get()
    }

    /// Takes the lock an agent holds on its name, for as long as its connection lasts.
    ///
    /// - Returns: `false` when another agent of that name holds it.
    private static func takeAgentLock(
        _ name: String,
        _ connection: PostgresConnection,
        logger: Logger
    ) async throws -> Bool {
        var locked = false
        for try await taken in try await connection.query(
            "SELECT pg_try_advisory_lock(\(PostgresSchema.agentLock), hashtext(\(name)))",
            logger: logger
        ).decode(Bool.self) {
            locked = taken
        }
        return locked
    }

    /// Records an agent as started now, with its host, engines and budget.
    private static func register(_ agent: AgentInfo, _ connection: PostgresConnection, logger: Logger) async throws {
        let engines = agent.lanes.filter { $0.value > 0 }.keys.map(\.rawValue).sorted()
        try await connection.query(
            """
            INSERT INTO agent (name, host, pid, engines, cpu, memory, started_at, heartbeat, url)
            VALUES (\(agent.name), \(agent.host), \(Int32(getpid())), \(engines), \(agent.cpu), \(agent.memory), now(),
              now(), \(agent.url))
            ON CONFLICT (name) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, engines = EXCLUDED.engines,
              cpu = EXCLUDED.cpu, memory = EXCLUDED.memory, started_at = now(), heartbeat = now(), url = EXCLUDED.url
            """,
            logger: logger
        )
    }

    private static func connectionConfiguration(
        _ location: PostgresLocation,
        password: String?
    ) throws -> PostgresConnection.Configuration {
        if location.isUnixSocket {
            return PostgresConnection.Configuration(
                unixSocketPath: location.socketPath,
                username: location.user,
                password: password,
                database: location.database
            )
        }
        let tls: PostgresConnection.Configuration.TLS =
            switch location.encryption {
            case .disable: .disable
            case .prefer: .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
        var configuration = PostgresConnection.Configuration(
            host: location.host,
            port: location.port,
            username: location.user,
            password: password,
            database: location.database,
            tls: tls
        )
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    private static func poolConfiguration(
        _ location: PostgresLocation,
        password: String?
    ) -> PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if location.isUnixSocket {
            configuration = PostgresClient.Configuration(
                unixSocketPath: location.socketPath,
                username: location.user,
                password: password,
                database: location.database
            )
        } else {
            let tls: PostgresClient.Configuration.TLS =
                switch location.encryption {
                case .disable: .disable
                case .prefer: .prefer(.makeClientConfiguration())
                case .require: .require(.makeClientConfiguration())
                }
            configuration = PostgresClient.Configuration(
                host: location.host,
                port: location.port,
                username: location.user,
                password: password,
                database: location.database,
                tls: tls
            )
        }
        configuration.options.connectTimeout = .seconds(10)
        return configuration
    }

    // MARK: Statements

    /// Runs `query` and returns its rows, trying it again on a new connection while its connection is lost.
    func rows(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await self.retrying { client in
            try await client.query(query, logger: self.logger).collect().map { $0.makeRandomAccess() }
        }
    }

    /// Runs a write to its end, whether or not the asking task is cancelled, and returns its rows.
    @discardableResult
    func write(_ query: PostgresQuery) async throws -> [PostgresRandomAccessRow] {
        try await self.shielded { try await self.rows(query) }
    }

    /// Runs `queries` in one transaction to its end, whether or not the asking task is cancelled.
    func transaction(_ queries: [PostgresQuery]) async throws {
        guard !queries.isEmpty else { return }
        try await self.shielded {
            try await self.retrying { client in
                try await client.withTransaction(logger: self.logger) { connection in
                    for query in queries { try await connection.query(query, logger: self.logger) }
                }
            }
        }
    }

    /// Runs `work` on a task of its own, which the asker's cancellation does not reach: shutdown cancels the jobs
    /// whose end is being recorded, and PostgresNIO gives up a cancelled task's lease.
    private func shielded<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        try await Task { try await work() }.value
    }

    func retrying<T>(_ work: (PostgresClient) async throws -> T) async throws -> T {
        let deadline = ContinuousClock.now + Self.reconnectWindow
        var delay = Duration.milliseconds(100)
        var warned = false
        while true {
            do {
                return try await work(self.client)
            } catch let error as PSQLError where Self.isConnectionLoss(error) && ContinuousClock.now < deadline {
                if !warned {
                    self.logger.warning(
                        "Store connection lost; trying again",
                        metadata: [
                            "store": "\(self.location.description)",
                            "error": "\(PostgresStoreError("lost", cause: error).message)",
                        ]
                    )
                    warned = true
                }
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            } catch let error as CancellationError {
                throw error
            } catch {
                throw PostgresStoreError("the store \(self.location.description)", cause: error)
            }
        }
    }

    /// Whether an error says the connection went (the server closed it, shut down, or could not be reached), rather
    /// than that the statement was refused.
    private static func isConnectionLoss(_ error: PSQLError) -> Bool {
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            // The client closes a connection itself once the server says it shuts down.
            return true
        case .server:
            // Class 08: connection exception; 57P01–57P03: the server shuts down, or cannot take connections yet.
            guard let state = error.serverInfo?[.sqlState] else { return false }
            return state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state)
        default:
            return false
        }
    }

    // MARK: Accepting and running jobs

    /// Offers the job to the agents' shared queue (``offer(_:cost:)``); its id may then differ from the store's.
    package func accept(_ job: Job) async throws {
        _ = try await self.offer(job, cost: job.estimatedCost ?? 0)
    }

    /// Writes a job's row anew as `running`, with its source's fingerprint, its rule, folder and origin; fenced by
    /// its lease.
    package func begin(_ job: Job) async throws {
        let members: Data? = try job.isGroup ? JSONEncoder().encode(job.members) : nil
        let fingerprint = job.fingerprint
        let now = Date().timeIntervalSince1970
        let token = self.token(of: job.id)
        try await self.fenced(
            job.id,
            token: token,
            """
            INSERT INTO job (id, source, device, inode, size, modified, changed, rule, state, output_folder, origin,
              updated_at, started_at, members, lane, agent)
            VALUES (\(job.id), \(Self.bytes(job.source)), \(Int64(bitPattern: fingerprint.device)),
              \(Int64(bitPattern: fingerprint.inode)), \(fingerprint.size), \(fingerprint.modifiedNanoseconds),
              \(fingerprint.changedNanoseconds), \(job.rule.name), 'running', \(Self.bytes(job.plan.directory)),
              \(job.origin.rawValue), \(now), \(now), \(members), \(job.engine.rawValue), \(self.agent))
            ON CONFLICT (id) DO UPDATE SET source = EXCLUDED.source, device = EXCLUDED.device,
              inode = EXCLUDED.inode, size = EXCLUDED.size, modified = EXCLUDED.modified, changed = EXCLUDED.changed,
              rule = EXCLUDED.rule, state = EXCLUDED.state, output_folder = EXCLUDED.output_folder,
              origin = EXCLUDED.origin, updated_at = EXCLUDED.updated_at, started_at = EXCLUDED.started_at,
              members = EXCLUDED.members, output_inode = NULL, output = NULL, output_parts = NULL, sidecar = NULL,
              sidecar_path = NULL, sidecar_folder = NULL, sidecar_skipped = false, sha256 = NULL,
              failure_code = NULL, failure_message = NULL, quarantine = NULL, engine = NULL, estimated_cost = NULL,
              cpu_seconds = NULL
            WHERE \(token)::bigint IS NULL OR job.lease_token = \(token)
            RETURNING id
            """
        )
    }

    package func committing(
        _ jobID: String,
        outputInode: UInt64,
        parts: [OutputPartRecord]?,
        sidecar: Sidecar,
        sidecarFolder: FilePath?,
        writesSidecar: Bool,
        cost: (engine: EngineKind, sample: CostHistory.Sample)?
    ) async throws {
        let encoded = try JSONEncoder().encode(sidecar)
        let encodedParts = try parts.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            """
            UPDATE job SET state = 'committing', output_inode = \(Int64(bitPattern: outputInode)), sidecar = \(encoded),
              sha256 = \(sidecar.source.sha256), sidecar_folder = \(sidecarFolder.map(Self.bytes)),
              sidecar_skipped = \(!writesSidecar), output_parts = \(encodedParts)::jsonb,
              engine = \(cost?.engine.rawValue), estimated_cost = \(cost?.sample.estimate),
              cpu_seconds = \(cost?.sample.cpuSeconds), updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token))
            RETURNING id
            """
        )
    }

    package func finish(_ jobID: String, output: FilePath, sidecar: FilePath?) async throws {
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            """
            UPDATE job SET state = 'completed', output = \(Self.bytes(output)), sidecar = NULL,
              sidecar_path = \(sidecar.map(Self.bytes)), updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token))
            RETURNING id
            """
        )
    }

    package func fail(_ jobID: String, failure: ConversionFailure, sidecar: FilePath?) async throws {
        try await self.end(jobID, state: .failed, reason: failure, sidecar: sidecar)
    }

    package func cancel(_ jobID: String, reason: ConversionFailure, sidecar: FilePath?) async throws {
        try await self.end(jobID, state: .cancelled, reason: reason, sidecar: sidecar)
    }

    private func end(_ jobID: String, state: JobState, reason: ConversionFailure, sidecar: FilePath?) async throws {
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            """
            UPDATE job SET state = \(state.rawValue), sidecar = NULL, failure_code = \(reason.code.rawValue),
              failure_message = \(reason.message), sidecar_path = \(sidecar.map(Self.bytes)),
              updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token))
            RETURNING id
            """
        )
    }

    /// Gives the job back to the agents' queue, where any agent that found its file claims it again.
    package func interrupt(_ jobID: String) async throws {
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            """
            UPDATE job SET \(unescaped: Self.requeued), updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token))
            RETURNING id
            """
        )
        try await self.notifyWork()
    }

    package func forget(_ jobID: String) async throws {
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            "DELETE FROM job WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token)) RETURNING id"
        )
    }

    package func skipDuplicate(_ jobID: String, of output: FilePath, sha256: String) async throws {
        let token = self.token(of: jobID)
        try await self.fenced(
            jobID,
            token: token,
            """
            UPDATE job SET state = 'completed', output = \(Self.bytes(output)), sha256 = \(sha256), sidecar = NULL,
              updated_at = \(Date().timeIntervalSince1970)
            WHERE id = \(jobID) AND (\(token)::bigint IS NULL OR lease_token = \(token))
            RETURNING id
            """
        )
    }

    // MARK: What the intake and the runner look up

    package func outcome(of source: FilePath, fingerprint: SourceFingerprint) async throws -> StoredOutcome? {
        let rows = try await self.rows(
            """
            SELECT state, output, failure_code, failure_message FROM job
            WHERE source = \(Self.bytes(source)) AND size = \(fingerprint.size)
              AND modified = \(fingerprint.modifiedNanoseconds) AND state IN ('completed', 'failed', 'cancelled')
            ORDER BY updated_at DESC LIMIT 1
            """
        )
        return try rows.first.map(Self.storedOutcome)
    }

    package func completedOutputs(
        rule: String,
        sourceSize size: Int64
    ) async throws -> [(output: FilePath, sha256: String)] {
        try await self.rows(
            """
            SELECT output, sha256 FROM job WHERE rule = \(rule) AND size = \(size) AND state = 'completed'
              AND sha256 IS NOT NULL AND output IS NOT NULL
            """
        ).map { row in (output: try Self.path(row["output"]), sha256: try row["sha256"].decode(String.self)) }
    }

    package func isOutput(_ path: FilePath, inode: UInt64) async throws -> Bool {
        let signed = Int64(bitPattern: inode)
        let part = "[{\"inode\": \(inode)}]"
        let rows = try await self.rows(
            """
            SELECT EXISTS (SELECT 1 FROM job WHERE output_folder = \(Self.bytes(path.removingLastComponent()))
              AND state IN ('committing', 'completed')
              AND ((output_inode = \(signed) AND (output IS NULL OR output = \(Self.bytes(path))))
                OR output_parts @> \(part)::jsonb))
            """
        )
        return try rows.first?[0].decode(Bool.self) ?? false
    }

    package func groupOutcome(
        of folder: FilePath,
        device: UInt64,
        inode: UInt64,
        rule: String
    ) async throws -> StoredGroup? {
        let rows = try await self.rows(
            """
            SELECT id, state, output, failure_code, failure_message, members FROM job
            WHERE source = \(Self.bytes(folder)) AND rule = \(rule) AND members IS NOT NULL
              AND state IN ('completed', 'failed', 'cancelled')
            ORDER BY updated_at DESC LIMIT 1
            """
        )
        guard let row = rows.first else { return nil }
        let members = try JSONDecoder().decode([GroupMember].self, from: try row["members"].decode(Data.self))
        return StoredGroup(
            jobID: try row["id"].decode(String.self),
            outcome: try Self.storedOutcome(row),
            members: members
        )
    }

    package func costSamples(window: Int) async throws -> [CostHistory.Key: [CostHistory.Sample]] {
        let rows = try await self.rows(
            """
            SELECT rule, engine, estimated_cost, cpu_seconds FROM (
              SELECT rule, engine, estimated_cost, cpu_seconds, updated_at,
                ROW_NUMBER() OVER (PARTITION BY rule, engine ORDER BY updated_at DESC) AS latest
              FROM job WHERE state = 'completed' AND engine IS NOT NULL AND estimated_cost > 0
                AND cpu_seconds IS NOT NULL
            ) AS measured WHERE latest <= \(window) ORDER BY updated_at
            """
        )
        var samples: [CostHistory.Key: [CostHistory.Sample]] = [:]
        for row in rows {
            let key = CostHistory.Key(
                rule: try row["rule"].decode(String.self),
                engine: EngineKind(rawValue: try row["engine"].decode(String.self))
            )
            samples[key, default: []].append(
                CostHistory.Sample(
                    estimate: try row["estimated_cost"].decode(Double.self),
                    cpuSeconds: try row["cpu_seconds"].decode(Double.self)
                )
            )
        }
        return samples
    }

    // MARK: Recovery

    /// The columns ``unfinished(_:)`` reads.
    static let unfinishedColumns =
        "id, source, rule, state, origin, output_folder, output_inode, sidecar, sidecar_folder, sidecar_skipped, "
        + "output_parts::text AS output_parts"

    package func unfinishedJobs() async throws -> [UnfinishedJob] {
        try await self.rows(
            """
            SELECT \(unescaped: Self.unfinishedColumns) FROM job
            WHERE (agent = \(self.agent) AND state IN ('queued', 'running', 'interrupted', 'committing'))
              OR (agent IS NULL AND state IN ('running', 'interrupted', 'committing'))
            ORDER BY updated_at, id
            """
        ).map(Self.unfinished)
    }

    /// An unfinished job from a row of ``unfinishedColumns``.
    static func unfinished(_ row: PostgresRandomAccessRow) throws -> UnfinishedJob {
        let stage: UnfinishedJob.Stage
        switch try row["state"].decode(String.self) {
        case JobState.queued.rawValue:
            stage = .queued
        case JobState.committing.rawValue:
            stage = .committing(
                CommitRecord(
                    outputFolder: try Self.path(row["output_folder"]),
                    outputInode: UInt64(bitPattern: try row["output_inode"].decode(Int64?.self) ?? -1),
                    parts: try row["output_parts"].decode(String?.self).map {
                        (try? JSONDecoder().decode([OutputPartRecord].self, from: Data($0.utf8))) ?? []
                    },
                    sidecar: try row["sidecar"].decode(Data?.self).flatMap {
                        try? JSONDecoder().decode(Sidecar.self, from: $0)
                    },
                    sidecarFolder: try Self.optionalPath(row["sidecar_folder"]),
                    writesSidecar: !(try row["sidecar_skipped"].decode(Bool.self))
                )
            )
        default:
            stage = .converting
        }
        return UnfinishedJob(
            id: try row["id"].decode(String.self),
            source: try Self.path(row["source"]),
            rule: try row["rule"].decode(String.self),
            origin: JobOrigin(rawValue: try row["origin"].decode(String.self)) ?? .watched,
            stage: stage
        )
    }

    package func settle(_ actions: [RecoveryAction]) async throws {
        let now = Date().timeIntervalSince1970
        try await self.transaction(
            try actions.map { action -> PostgresQuery in
                switch action {
                case .rerun(let id):
                    // Queued again, for whichever agent finds its file: every agent that offered it holds its id.
                    return "UPDATE job SET \(unescaped: Self.requeued), updated_at = \(now) WHERE id = \(id)"
                case .resubmit(let id):
                    return "UPDATE job SET \(unescaped: Self.requeued), updated_at = \(now) WHERE id = \(id)"
                case .complete(let id, let output, let sidecar):
                    return try """
                    UPDATE job SET state = 'completed', output = \(Self.bytes(output)), sidecar = NULL,
                      sidecar_path = \(sidecar.map(Self.bytes)), updated_at = \(now)
                    WHERE id = \(id)
                    """
                }
            }
        )
        for action in actions { if case .complete(let id, _, _) = action { self.letGo(id) } }
        if actions.contains(where: { if case .complete = $0 { false } else { true } }) { try await self.notifyWork() }
    }

    package func restore(_ jobs: [RestoredJob]) async throws -> Int {
        guard !jobs.isEmpty else { return 0 }
        let known = Set(
            try await self.rows("SELECT id FROM job WHERE id = ANY(\(jobs.map(\.id)))").map {
                try $0["id"].decode(String.self)
            }
        )
        let fresh = jobs.filter { !known.contains($0.id) }
        try await self.transaction(
            try fresh.map { job -> PostgresQuery in
                let fingerprint = job.fingerprint
                return try """
                INSERT INTO job (id, source, device, inode, size, modified, changed, rule, state, output_folder,
                  output_inode, output, sidecar_path, sha256, failure_code, failure_message, updated_at,
                  started_at)
                VALUES (\(job.id), \(Self.bytes(job.source)), \(Int64(bitPattern: fingerprint?.device ?? 0)),
                  \(Int64(bitPattern: fingerprint?.inode ?? 0)), \(job.sourceSize),
                  \(fingerprint?.modifiedNanoseconds ?? -1), \(fingerprint?.changedNanoseconds), \(job.rule),
                  \(job.status.rawValue), \(Self.bytes(job.outputFolder)),
                  \(job.outputInode.map { Int64(bitPattern: $0) }), \(job.output.map(Self.bytes)),
                  \(Self.bytes(job.sidecar)), \(job.sha256), \(job.failure?.code.rawValue),
                  \(job.failure?.message), \((job.endedAt ?? Date()).timeIntervalSince1970),
                  \(job.startedAt?.timeIntervalSince1970))
                ON CONFLICT DO NOTHING
                """
            }
        )
        return fresh.count
    }

    // MARK: Values

    /// A path as the bytes it is stored as.
    static func bytes(_ path: FilePath) -> Data {
        path.bytes
    }

    static func path(_ cell: PostgresCell) throws -> FilePath {
        try Self.optionalPath(cell) ?? FilePath()
    }

    static func optionalPath(_ cell: PostgresCell) throws -> FilePath? {
        guard let data = try cell.decode(Data?.self), !data.isEmpty else { return nil }
        return FilePath(bytes: data)
    }

    /// How the job of a row with `state`, `output`, `failure_code` and `failure_message` ended.
    static func storedOutcome(_ row: PostgresRandomAccessRow) throws -> StoredOutcome {
        switch try row["state"].decode(String.self) {
        case JobState.cancelled.rawValue:
            return .cancelled
        case JobState.failed.rawValue:
            let code = try row["failure_code"].decode(String?.self).flatMap(ConversionFailure.Code.init(rawValue:))
            let message = try row["failure_message"].decode(String?.self) ?? ""
            return .failed(code.map { ConversionFailure($0, message) })
        default:
            return .completed(output: try Self.path(row["output"]))
        }
    }
}
