import ChuteApp
import ChuteCatalog
import ChuteCore
import ChutePostgres
import ChuteRuntime
import ChuteTestSupport
import Foundation
import Logging
import SystemPackage
import Testing

/// What the PostgreSQL store does beyond the journal's promises: a schema migrated once and never downgraded, one
/// agent of a name at a time, a server restarted under it, and a password kept out of the address.
@Suite struct PostgresJobStoreTests {
    private static let logger = Logger(label: "test")

    @Test func theSchemaIsMigratedOnceAndASecondAgentOfTheSameNameIsRefused() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let location = try server.location()
        try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { first in
            #expect(first.origin == .created)
            let refusal = await #expect(throws: PostgresStoreError.self) {
                try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { _ in }
            }
            print("a second agent of the same name: \(refusal?.description ?? "")")
            #expect(refusal?.description.contains("an agent named 'test' runs on this database already") == true)
            try await PostgresJobStore.withStore(at: location, agent: .test("other"), logger: Self.logger) { other in
                #expect(other.origin == .existing)
            }
        }
        // Once the first has stopped, the next opens the same schema, and applies nothing.
        try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { second in
            #expect(second.origin == .existing)
        }
        #expect(
            try server.psql("SELECT string_agg(version || ' ' || name, ',') FROM chute_migration")
                == "1 jobs and kept notifications,2 a queue that agents share,3 the watched folder of each job,"
                + "4 hand-offs between agents without shared storage"
        )
    }

    @Test func aSchemaNewerThanThisBuildIsRefused() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let location = try server.location()
        try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { _ in }
        try server.psql("INSERT INTO chute_migration (version, name) VALUES (99, 'from a newer Chute')")
        let refusal = await #expect(throws: PostgresStoreError.self) {
            try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { _ in }
        }
        print("a newer schema: \(refusal?.description ?? "")")
        #expect(refusal?.description.contains("its schema is version 99, newer than this Chute knows (4)") == true)
        #expect(try server.psql("SELECT COUNT(*) FROM job") == "0", "the tables are left as they were")
    }

    @Test func aWrongPasswordIsRefusedWithTheServersMessage() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        var location = try server.location()
        location.passwordFile = nil
        let refusal = await #expect(throws: (any Error).self) {
            setenv(PostgresLocation.passwordVariable, "not-the-password", 1)
            defer { unsetenv(PostgresLocation.passwordVariable) }
            try await PostgresJobStore.withStore(at: location, agent: .test(), logger: Self.logger) { _ in }
        }
        print("a wrong password: \(refusal.map { "\($0)" } ?? "")")
        #expect("\(refusal.map { "\($0)" } ?? "")".contains("password authentication failed for user \"chute\""))
    }

    /// `pg_ctl restart -m fast` closes every connection while jobs are being recorded: each write is done again on a
    /// new connection, and none is lost or doubled.
    @Test func aServerRestartedUnderWritesLosesNone() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let directory = try TemporaryDirectory(prefix: "postgres-restart")
        defer { directory.remove() }
        let output = try directory.makeDirectory("out")
        try await PostgresJobStore.withStore(at: try server.location(), agent: .test(), logger: Self.logger) { store in
            let jobs = try (0..<200).map { try Job.stored(directory.appending("in/\($0).png"), output: output) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for job in jobs {
                        try await store.accept(job)
                        try await store.begin(job)
                        try await store.finish(job.id, output: output.appending("\(job.id).jpg"), sidecar: nil)
                    }
                }
                group.addTask {
                    try await waitUntil("20 jobs recorded") {
                        (try await store.countsByState()["completed"] ?? 0) >= 20 ? true : nil
                    }
                    try await Blocking.run { try server.restart() }
                }
                try await group.waitForAll()
            }
            let counts = try await store.countsByState()
            print("after a restart during 200 jobs: \(counts)")
            #expect(counts == ["completed": 200])
        }
        #expect(try server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed'") == "200")
        #expect(try server.serverLog().contains("database system is shut down"), "the server did restart")
    }

    /// A claim of a file another agent found names that agent's URL and a key of its own; that agent grants hand-off
    /// requests only with the claim's token and key, while its lease runs, and nothing once the claim is given back.
    @Test func aHandOffIsGrantedOnlyToTheClaimThatHoldsTheJob() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let location = try server.location()
        var finder = AgentInfo.test("finder")
        finder.url = "http://finder.lan:8750"
        try await PostgresJobStore.withStore(at: location, agent: finder, logger: Self.logger) { owner in
            let job = try Job.stored(FilePath("/share/in/a.png"), output: FilePath("/share/out"))
            guard case .live(let id) = try await owner.offer(job, cost: 1) else {
                Issue.record("the offer was not queued")
                return
            }
            try await PostgresJobStore.withStore(at: location, agent: .test("runner"), logger: Self.logger) { runner in
                let claims = try await runner.claim(
                    among: [],
                    foundElsewhere: ["r"],
                    excluding: [],
                    limits: [.image: 1],
                    agingLimit: .seconds(60)
                )
                let claim = try #require(claims.first)
                let ticket = try #require(claim.handoff)
                print("claim \(claim.token) of \(id): owner \(ticket.owner) at \(ticket.url), key \(ticket.key)")
                #expect(claim.id == id && ticket.owner == "finder" && ticket.url == "http://finder.lan:8750")
                let grant = try await owner.handoffGrant(id, token: claim.token, key: ticket.key)
                #expect(grant?.source == job.source && grant?.outputFolder == job.plan.directory)
                #expect(grant?.claimant == "runner" && grant?.root == job.root)
                #expect(try await owner.handoffGrant(id, token: claim.token, key: "guessed") == nil)
                #expect(try await owner.handoffGrant(id, token: claim.token + 1, key: ticket.key) == nil)
                // Only the agent that found the file serves it.
                #expect(try await runner.handoffGrant(id, token: claim.token, key: ticket.key) == nil)
                try await owner.recordSourceHash(id, sha256: "abc123")
                #expect(try await runner.sourceHash(of: id) == "abc123")
                try await runner.release(id)
                #expect(try await owner.handoffGrant(id, token: claim.token, key: ticket.key) == nil)
                // The finder's own claim needs no hand-off.
                let own = try await owner.claim(
                    among: [id],
                    foundElsewhere: [],
                    excluding: [],
                    limits: [.image: 1],
                    agingLimit: .seconds(60)
                )
                #expect(own.map(\.id) == [id] && own.first?.handoff == nil)
            }
        }
    }

    /// A Latin-1 file name is not UTF-8: the store keeps its bytes, and finds the source by them.
    @Test(arguments: StoreUnderTest.allCases)
    func aFileNameThatIsNotUTF8IsKeptByteForByte(_ store: StoreUnderTest) async throws {
        let directory = try TemporaryDirectory(prefix: "store-latin1")
        defer { directory.remove() }
        let source = FilePath(bytes: Data("/in/caf".utf8) + Data([0xE9]) + Data(".png".utf8))
        let job = try Job.stored(source, output: directory.appending("out"))
        try await store.with(in: directory) { journal in
            try await journal.accept(job)
            try await journal.begin(job)
            try await journal.finish(job.id, output: directory.appending("out/caf\u{e9}.jpg"), sidecar: nil)
            #expect(try await journal.entry(job.id)?.source.bytes == source.bytes)
            #expect(try await journal.history(JobHistoryFilter(text: "caf")).map(\.id) == [job.id])
            #expect(try await journal.outcome(of: source, fingerprint: job.fingerprint) != nil)
            let utf8 = FilePath("/in/caf\u{e9}.png")
            #expect(try await journal.outcome(of: utf8, fingerprint: job.fingerprint) == nil, "another name")
        }
    }
}
