import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The daemon keeping its jobs in a PostgreSQL database (`settings.store`) rather than in the journal beside the
/// rules: a real server of the test's own, a batch cut by SIGKILL, a restart that converts nothing twice, a switch
/// from the journal that converts nothing again, and a wrong password said at once.
@Suite struct PostgresStoreEndToEndTests {
    private static func harness(_ server: PostgresServer) throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """,
            settings: """
                  store: \(server.address)
                  storePasswordFile: \(server.passwordFile)
                """
        )
    }

    /// The outputs in the outbox, sentinels left out.
    private static func outputs(of harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter { $0.hasSuffix(".jpg") && !$0.contains("zz-sentinel-") }
    }

    @Test func aBatchCutBySIGKILLEndsWithOneOutputEachAndARestartConvertsNothingTwice() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let harness = try Self.harness(server)
        defer { harness.stop() }
        let staging = try harness.directory.makeDirectory("staging")
        let names = (0..<30).map { String(format: "photo%02d.png", $0) }
        for name in names {
            try Fixtures.makeImage(at: staging.appending(name), width: 640, height: 480)
        }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let opened = try #require(daemon.logLines(containing: "Journal opened").first)
        #expect(opened.contains("path=chute@127.0.0.1:\(server.port)/chute"), "\(opened)")
        try harness.moveIn(names, from: staging)
        try await waitUntil("10 outputs", timeout: 120) { Self.outputs(of: harness).count >= 10 ? true : nil }
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)

        try await harness.start()
        let sidecars = try await harness.waitForSidecars(names.count, timeout: 180)
        let outputs = Self.outputs(of: harness)
        let recorded = try server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed' AND rule = 'to-jpg'")
        print(
            "postgres store: inputs \(names.count), outputs \(outputs.count), completed in the database \(recorded) "
                + "(with the sentinel), failed \(sidecars.values.filter { $0.status == .failed }.count)"
        )
        #expect(outputs.sorted() == names.map { $0.replacingOccurrences(of: ".png", with: ".jpg") }.sorted())
        #expect(sidecars.values.allSatisfy { $0.status == .completed })
        #expect(recorded == "\(names.count + 1)")
        #expect(!FileManager.default.fileExists(atPath: harness.directory.appending(".chute/journal.sqlite").string))

        // A third start finds every file done.
        harness.daemon?.terminate()
        try await harness.start()
        try await harness.waitForSidecars(names.count, timeout: 60)
        #expect(Self.outputs(of: harness).count == names.count, "\(Self.outputs(of: harness).sorted())")
        #expect(try #require(harness.daemon).logLines(containing: "Job started", "photo").isEmpty)
    }

    /// A database that is new learns what the sidecars of earlier runs say, as a new journal does: moving from the
    /// journal to a database converts nothing again.
    @Test func movingFromTheJournalToADatabaseConvertsNothingAgain() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let harness = try Self.harness(server)
        defer { harness.stop() }
        let rules = try String(contentsOfFile: harness.configPath.string, encoding: .utf8)
        let onJournal = rules.split(separator: "\n").filter { !$0.contains("store") }.joined(separator: "\n")
        try onJournal.write(toFile: harness.configPath.string, atomically: true, encoding: .utf8)
        let staging = try harness.directory.makeDirectory("staging")
        let names = ["a.png", "b.png", "c.png"]
        for name in names { try Fixtures.makeImage(at: staging.appending(name), width: 64, height: 64) }
        try await harness.start()
        try harness.moveIn(names, from: staging)
        try await harness.waitForSidecars(names.count)
        harness.daemon?.terminate()

        try rules.write(toFile: harness.configPath.string, atomically: true, encoding: .utf8)
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let rebuilt = try #require(daemon.logLines(containing: "Journal rebuilt from sidecars").first)
        print("moved to a database: \(rebuilt)")
        #expect(rebuilt.contains("restored=4"), "three files and the sentinel: \(rebuilt)")
        try await harness.waitForSidecars(names.count)
        #expect(Self.outputs(of: harness).sorted() == ["a.jpg", "b.jpg", "c.jpg"])
        #expect(daemon.logLines(containing: "Job started", "/inbox/a.png").isEmpty)
    }

    @Test func aWrongPasswordStopsTheDaemonAtOnceWithTheServersWords() async throws {
        let server = try PostgresServer()
        defer { server.stop() }
        let harness = try Self.harness(server)
        defer { harness.stop() }
        try "not-the-password\n".write(toFile: server.passwordFile.string, atomically: false, encoding: .utf8)
        let daemon = try ChuteProcess(["run", "--config", harness.configPath.string])
        let exit = try await daemon.waitForExit(timeout: 30)
        let said = daemon.log.joined(separator: "\n")
        print("a wrong password: exit \(exit.status): \(said)")
        #expect(exit.status != 0 && !exit.signalled)
        #expect(said.contains("password authentication failed for user \"chute\" (SQLSTATE 28P01)"), "\(said)")
        #expect(!said.contains("not-the-password"))
    }
}
