import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A journal lost or damaged is rebuilt from the sidecars beside the outputs, so that nothing converted is converted
/// again.
@Suite(.timeLimit(.minutes(3)))
struct JournalRebuildEndToEndTests {
    private func harness() throws -> DaemonHarness {
        try DaemonHarness(
            afterSentinels: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                """
        )
    }

    /// Converts three photos, stops the daemon, lets `damage` remove or spoil the journal, and starts it again.
    /// Returns the second run's daemon once a sentinel proved it settled.
    private func convertThenRestart(
        _ harness: DaemonHarness,
        damage: (FilePath) throws -> Void
    ) async throws -> ChuteProcess {
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for name in ["a.png", "b.png", "c.png"] {
            try Fixtures.makeImage(at: staging.appending(name), width: 64, height: 48)
        }
        try harness.moveIn(["a.png", "b.png", "c.png"], from: staging)
        try await harness.waitForSidecars(3)
        harness.daemon?.terminate()
        try damage(harness.directory.appending(".chute/journal.sqlite"))
        try await harness.start()
        let daemon = try #require(harness.daemon)
        // Each photo found again by the start's scan is either known as handled or converted again.
        for name in ["a.png", "b.png", "c.png"] {
            try await waitUntil("\(name) decided after the restart", timeout: 60) {
                let path = "input.path=\(harness.inbox.appending(name))"
                return daemon.logLines(containing: "Already handled before a restart", path).isEmpty
                    && daemon.logLines(containing: "Job completed", path).isEmpty ? nil : true
            }
        }
        return daemon
    }

    @Test func aRemovedJournalIsRebuiltAndNothingIsConvertedAgain() async throws {
        let harness = try self.harness()
        defer { harness.stop() }
        let daemon = try await self.convertThenRestart(harness) { journal in
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: journal.string + suffix)
            }
        }
        let rebuilt = daemon.logLines(containing: "Journal rebuilt from sidecars")
        print("journal removed: \(rebuilt)")
        #expect(rebuilt.count == 1)
        // The three photos and the first run's sentinel.
        #expect(rebuilt.first?.contains("restored=4") == true, "\(rebuilt)")
        #expect(daemon.logLines(containing: "Job completed", "rule.name=photos").isEmpty)
        let outputs = harness.directory.files(below: "outbox").filter {
            $0.hasSuffix(".jpg") && !$0.contains("sentinel")
        }
        #expect(outputs.sorted() == ["a.jpg", "b.jpg", "c.jpg"], "\(outputs)")
    }

    @Test func aDamagedJournalIsMovedAsideAndRebuilt() async throws {
        let harness = try self.harness()
        defer { harness.stop() }
        let daemon = try await self.convertThenRestart(harness) { journal in
            for suffix in ["-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: journal.string + suffix)
            }
            try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: journal.string))
        }
        let damaged = daemon.logLines(containing: "Journal damaged")
        print("journal damaged: \(damaged + daemon.logLines(containing: "Journal rebuilt from sidecars"))")
        #expect(damaged.count == 1)
        #expect(daemon.logLines(containing: "Journal rebuilt from sidecars", "restored=4").count == 1)
        #expect(daemon.logLines(containing: "Job completed", "rule.name=photos").isEmpty)
        let aside = try FileManager.default.contentsOfDirectory(atPath: harness.directory.appending(".chute").string)
        #expect(aside.contains { $0.hasPrefix("journal.sqlite.damaged-") }, "\(aside)")
    }
}
