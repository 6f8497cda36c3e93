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
            try await PostgresJobStore.withStore(at: try server.location(), logger: Logger(label: "test")) { store in
                #expect(store.origin == .created)
                try await body(store)
            }
        }
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
