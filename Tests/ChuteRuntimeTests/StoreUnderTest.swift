import ChuteApp
import ChuteCatalog
import ChuteCore
import ChutePostgres
import ChuteRuntime
import ChuteTestSupport
import Logging
import SystemPackage
import Testing

/// The stores that the tests of ``JobStore``'s promises run against: the journal, and a PostgreSQL database on a
/// server of the test's own (``PostgresServer``).
enum StoreUnderTest: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case journal, postgres

    var testDescription: String { self.rawValue }

    /// Runs `body` with a new, empty store of this kind (the journal in `directory`).
    func with(in directory: TemporaryDirectory, _ body: (any JobStore) async throws -> Void) async throws {
        switch self {
        case .journal:
            try await body(try SQLiteJobStore(path: directory.appending("journal.sqlite")))
        case .postgres:
            let server = try PostgresServer()
            defer { server.stop() }
            try await PostgresJobStore.withStore(
                at: try server.location(),
                agent: .test(),
                logger: Logger(label: "test")
            ) { store in
                #expect(store.origin == .created)
                try await body(store)
            }
        }
    }
}

extension Job {
    /// A job of the rule `r` (anything → JPEG into `output`) on `source`, with a fixed fingerprint: what the store
    /// tests record.
    static func stored(_ source: FilePath, output: FilePath, name: String = "out.jpg") throws -> Job {
        let rule = Rule(
            name: "r",
            match: [try GlobPattern("*")],
            to: try #require(Engines.registry.format(named: "jpg")),
            output: output
        )
        return Job(
            source: source,
            root: source.removingLastComponent(),
            rule: rule,
            plan: OutputPlan(directory: output, name: FilePath.Component(name)!),
            fingerprint: SourceFingerprint(device: 1, inode: 2, size: 3, modifiedNanoseconds: 4),
            sniffed: .png
        )
    }
}

extension AgentInfo {
    /// An agent of one image lane, as the store tests open a database.
    static func test(_ name: String = "test") -> AgentInfo {
        AgentInfo(name: name, host: "test-host", lanes: [.image: 1], cpu: 2, memory: 1 << 30)
    }
}

extension PostgresServer {
    /// The server's database as `settings.store` names it, with the password in its file.
    func location() throws -> PostgresLocation {
        var location = try PostgresLocation.parse(self.address).get()
        location.passwordFile = self.passwordFile
        return location
    }
}
