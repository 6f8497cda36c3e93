import Logging
import PostgresNIO

/// The PostgreSQL store's schema, as numbered migrations: each is applied once, in order, in a transaction of its own,
/// and recorded in `chute_migration`. Agents starting together take turns through an advisory lock, so that one
/// applies what is missing and the others find it done.
enum PostgresSchema {
    /// The advisory lock that migrations run under (the bytes of "chute" and a 1).
    static let migrationLock: Int64 = 0x63_6875_7465_01
    /// The first key of the advisory lock an agent holds on its name for as long as it runs (the bytes of "chu" and
    /// a 2); the second is the name's hash.
    static let agentLock: Int32 = 0x63_6875_02
    /// The channel whose notifications say that a job is there to claim.
    static let workChannel = "chute_work"

    /// One migration: its version, what it is for, and its statements.
    struct Migration {
        var version: Int32
        var name: String
        var statements: [String]
    }

    /// Every migration, oldest first. A migration, once released, is never edited: a change is a new one.
    static let migrations: [Migration] = [
        Migration(
            version: 1,
            name: "jobs and kept notifications",
            statements: [
                // Paths are bytes: file names need not be valid UTF-8. Times are seconds since 1970, as the journal's.
                """
                CREATE TABLE job (
                  id text PRIMARY KEY,
                  source bytea NOT NULL,
                  device bigint NOT NULL,
                  inode bigint NOT NULL,
                  size bigint NOT NULL,
                  modified bigint NOT NULL,
                  changed bigint,
                  rule text NOT NULL,
                  state text NOT NULL,
                  origin text NOT NULL DEFAULT 'watched',
                  output_folder bytea NOT NULL,
                  output_inode bigint,
                  output bytea,
                  output_parts jsonb,
                  sidecar bytea,
                  sidecar_path bytea,
                  sidecar_folder bytea,
                  sidecar_skipped boolean NOT NULL DEFAULT false,
                  sha256 text,
                  failure_code text,
                  failure_message text,
                  quarantine bytea,
                  members bytea,
                  engine text,
                  estimated_cost double precision,
                  cpu_seconds double precision,
                  started_at double precision,
                  updated_at double precision NOT NULL
                )
                """,
                "CREATE INDEX job_source ON job (source)",
                "CREATE INDEX job_rule_size ON job (rule, size)",
                "CREATE INDEX job_updated_at ON job (updated_at)",
                "CREATE INDEX job_state ON job (state)",
                "CREATE INDEX job_quarantined ON job (inode) WHERE quarantine IS NOT NULL",
                """
                CREATE TABLE notification (
                  id bigserial PRIMARY KEY,
                  kind text NOT NULL,
                  url text NOT NULL,
                  event text NOT NULL,
                  payload bytea NOT NULL,
                  kept_at double precision NOT NULL
                )
                """,
            ]
        ),
        Migration(
            version: 2,
            name: "a queue that agents share",
            statements: [
                // Who holds (or last held) a job, its lane, its lease's token and end on the server's clock, and when
                // it was queued on that clock (for the ageing limit).
                """
                ALTER TABLE job ADD COLUMN agent text, ADD COLUMN lane text, ADD COLUMN lease_token bigint,
                  ADD COLUMN lease_until timestamptz, ADD COLUMN queued_at double precision
                """,
                "CREATE SEQUENCE chute_lease_token",
                // One job per version of a source and rule: the agents that find one file offer one job.
                """
                UPDATE job SET state = 'retried' WHERE id IN (
                  SELECT id FROM (
                    SELECT id, ROW_NUMBER() OVER (PARTITION BY rule, source, size, modified ORDER BY updated_at DESC)
                      AS newer
                    FROM job WHERE state <> 'retried' AND modified <> -1
                  ) AS versions WHERE newer > 1
                )
                """,
                """
                CREATE UNIQUE INDEX job_version ON job (rule, source, size, modified)
                  WHERE state <> 'retried' AND modified <> -1
                """,
                "CREATE INDEX job_claimable ON job (lane, estimated_cost) WHERE state = 'queued' AND agent IS NULL",
                "CREATE INDEX job_leased ON job (lease_until) WHERE agent IS NOT NULL",
                """
                CREATE TABLE agent (
                  name text PRIMARY KEY,
                  host text NOT NULL,
                  pid integer NOT NULL,
                  engines text[] NOT NULL,
                  cpu integer NOT NULL,
                  memory bigint NOT NULL,
                  started_at timestamptz NOT NULL,
                  heartbeat timestamptz NOT NULL
                )
                """,
            ]
        ),
        Migration(
            version: 3,
            name: "the watched folder of each job",
            statements: [
                // What an agent that watches no folder needs to make the job of a file another agent found.
                "ALTER TABLE job ADD COLUMN root bytea"
            ]
        ),
        Migration(
            version: 4,
            name: "hand-offs between agents without shared storage",
            statements: [
                // Where each agent's API answers other agents; which agent found a job's file; the key of the claim
                // that the hand-off requests carry; the source's SHA-256 as the agent that found it served it.
                "ALTER TABLE agent ADD COLUMN url text",
                "ALTER TABLE job ADD COLUMN found_by text, ADD COLUMN handoff_key text, ADD COLUMN source_sha256 text",
            ]
        ),
    ]

    /// The newest version this build knows.
    static var latest: Int32 { Self.migrations.last?.version ?? 0 }

    /// Applies the migrations the database lacks, under the migration lock.
    ///
    /// - Returns: the version the database had before (0: a new database).
    /// - Throws: ``PostgresStoreError`` when the database's schema is newer than this build knows (a downgrade), or
    ///   when a migration fails.
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws -> Int32 {
        try await connection.query("SELECT pg_advisory_lock(\(Self.migrationLock))", logger: logger)
        do {
            let before = try await Self.apply(connection, logger: logger)
            try await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
            return before
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(Self.migrationLock))", logger: logger)
            throw error
        }
    }

    private static func apply(_ connection: PostgresConnection, logger: Logger) async throws -> Int32 {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS chute_migration (
              version integer PRIMARY KEY,
              name text NOT NULL,
              applied_at timestamptz NOT NULL DEFAULT now()
            )
            """,
            logger: logger
        )
        var current: Int32 = 0
        for try await version in try await connection.query(
            "SELECT COALESCE(MAX(version), 0) FROM chute_migration",
            logger: logger
        ).decode(Int32.self) {
            current = version
        }
        guard current <= Self.latest else {
            throw PostgresStoreError(
                "its schema is version \(current), newer than this Chute knows (\(Self.latest)); it was written by a "
                    + "newer Chute: run that one, or a new database"
            )
        }
        for migration in Self.migrations where migration.version > current {
            try await connection.withTransaction(logger: logger) { connection in
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO chute_migration (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger
                )
            }
            logger.info(
                "Store migrated",
                metadata: ["schema.version": "\(migration.version)", "schema.name": "\(migration.name)"]
            )
        }
        return current
    }
}

/// The PostgreSQL store cannot be used, with the library's or the server's message.
package struct PostgresStoreError: Error, CustomStringConvertible {
    package var message: String

    init(_ message: String) {
        self.message = message
    }

    /// An error of PostgresNIO, with what the server said: its own description hides it.
    init(_ what: String, cause: any Error) {
        if let error = cause as? PSQLError {
            var text = "\(error.code)"
            if let message = error.serverInfo?[.message] {
                text = message + (error.serverInfo?[.sqlState].map { " (SQLSTATE \($0))" } ?? "")
                if let detail = error.serverInfo?[.detail] { text += ": " + detail }
            } else if let underlying = error.underlying {
                text += ": \(underlying)"
            }
            self.message = "\(what): \(text)"
        } else {
            self.message = "\(what): \(cause)"
        }
    }

    package var description: String { self.message }
}
