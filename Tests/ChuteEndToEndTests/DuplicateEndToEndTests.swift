import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// `onDuplicate` (a re-upload of content a rule already converted) and `sidecars` (where sidecars go).
@Suite(.timeLimit(.minutes(3)))
struct DuplicateEndToEndTests {
    /// Makes `a.png` in `staging` and `copies` byte-identical copies of it, `copy-1.png`, `copy-2.png`, ….
    private func makeImageWithCopies(_ copies: Int, in staging: FilePath) throws {
        try Fixtures.makeImage(at: staging.appending("a.png"))
        for number in 1...copies {
            try FileManager.default.copyItem(
                atPath: staging.appending("a.png").string,
                toPath: staging.appending("copy-\(number).png").string
            )
        }
    }

    /// Replaces the inbox's `a.png` with `staging/name`: the same name, a new file.
    private func reupload(_ name: String, from staging: FilePath, into harness: DaemonHarness) throws {
        try FileManager.default.removeItem(atPath: harness.inbox.appending("a.png").string)
        try FileManager.default.moveItem(
            atPath: staging.appending(name).string,
            toPath: harness.inbox.appending("a.png").string
        )
    }

    /// Waits until the re-uploaded `a.png` was either skipped or converted to `a-1.jpg`, and says which.
    private func reuploadOutcome(_ harness: DaemonHarness) async throws -> String {
        let daemon = try #require(harness.daemon)
        return try await waitUntil("the re-upload to be skipped or converted", timeout: 60) {
            if !daemon.logLines(containing: "Skipped: identical").isEmpty { return "skipped" }
            if harness.sidecars()["a-1.jpg" + Sidecar.fileSuffix] != nil { return "converted to a-1.jpg" }
            return nil
        }
    }

    @Test func anIdenticalReuploadIsSkippedWhileItsOutputExists() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try self.makeImageWithCopies(2, in: staging)
        try harness.moveIn(["a.png"], from: staging)
        try await harness.waitForSidecars(1)

        try self.reupload("copy-1.png", from: staging, into: harness)
        #expect(try await self.reuploadOutcome(harness) == "skipped")
        let daemon = try #require(harness.daemon)
        let skipped = daemon.log.compactMap(Logfmt.parse).filter { $0["msg"]?.hasPrefix("Skipped: identical") == true }
        #expect(skipped.count == 1)
        #expect(skipped.first?["duplicate.of"] == harness.outbox.appending("a.jpg").string)
        #expect(skipped.first?["input.path"] == harness.inbox.appending("a.png").string)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("a-1.jpg").string))
        // The skip is its own outcome in the metrics, and adds no output bytes: what was written is a.jpg and the
        // sentinel's output, which the same rule converts.
        let metrics = try harness.metrics()
        let outcomes = ["completed", "skipped"].map {
            metrics.value("chute_jobs_finished_total", ["rule": "to-jpg", "outcome": $0])
        }
        let bytes = metrics.value("chute_output_bytes_total", ["rule": "to-jpg"])
        let written = try ["a.jpg", "zz-sentinel-1.jpg"].reduce(0) { total, name in
            try total + #require(
                FileManager.default.attributesOfItem(atPath: harness.outbox.appending(name).string)[.size] as? Int
            )
        }
        print("duplicate skip metrics: completed, skipped \(outcomes), output bytes \(bytes ?? -1) of \(written)")
        #expect(outcomes == [2, 1])
        #expect(bytes == Double(written))

        // Once the output is gone, the same content is converted again, under the free name.
        for name in ["a.jpg", "a.jpg" + Sidecar.fileSuffix] {
            try FileManager.default.removeItem(atPath: harness.outbox.appending(name).string)
        }
        try self.reupload("copy-2.png", from: staging, into: harness)
        let again = try await waitUntil("a.jpg converted again", timeout: 60) {
            harness.sidecars()["a.jpg" + Sidecar.fileSuffix]
        }
        #expect(again.status == .completed)
        #expect(daemon.logLines(containing: "Skipped: identical").count == 1)
    }

    /// The same photo copied into two album folders: the second album gets its own output (a link to the first
    /// output, or a conversion), not a skip that leaves it silently incomplete.
    @Test func anIdenticalCopyInAnotherFolderGetsItsOwnOutput() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try self.makeImageWithCopies(1, in: staging)
        for album in ["album1", "album2"] {
            _ = try harness.directory.makeDirectory("inbox/\(album)")
        }
        try FileManager.default.moveItem(
            atPath: staging.appending("a.png").string,
            toPath: harness.inbox.appending("album1/a.png").string
        )
        try await harness.waitForSidecars(1)
        try FileManager.default.moveItem(
            atPath: staging.appending("copy-1.png").string,
            toPath: harness.inbox.appending("album2/a.png").string
        )
        let sidecars = try await harness.waitForSidecars(2)
        let daemon = try #require(harness.daemon)
        let said = daemon.logLines(containing: "input.path=\(harness.inbox.appending("album2/a.png"))")
            .filter { $0.contains("Identical") || $0.contains("Skipped") || $0.contains("Job completed") }
        print("copy in another album: \(said)")
        #expect(sidecars["album2/a.jpg" + Sidecar.fileSuffix]?.status == .completed, "\(sidecars.keys)")
        let first = FileManager.default.contents(atPath: harness.outbox.appending("album1/a.jpg").string)
        let second = FileManager.default.contents(atPath: harness.outbox.appending("album2/a.jpg").string)
        #expect(first != nil && first == second)
        #expect(said.contains { $0.contains("Identical to an earlier output elsewhere") })
        #expect(daemon.logLines(containing: "Skipped: identical").isEmpty)
    }

    @Test func onDuplicateConvertConvertsAgain() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    onDuplicate: convert
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try self.makeImageWithCopies(1, in: staging)
        try harness.moveIn(["a.png"], from: staging)
        try await harness.waitForSidecars(1)

        try self.reupload("copy-1.png", from: staging, into: harness)
        #expect(try await self.reuploadOutcome(harness) == "converted to a-1.jpg")
    }

    @Test func sidecarsGoToTheirFolderOrOnlyToFailedJobs() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: meta
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    sidecars: ./meta
                  - name: quiet
                    match: "*.gif"
                    to: png
                    output: ./outbox/quiet
                    sidecars: failed-only
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging/sub")
        try Fixtures.makeImage(at: staging.appending("a.png"))
        try Fixtures.makeImage(at: harness.directory.appending("staging/b.gif"))
        try Fixtures.makeRandomFile(at: harness.directory.appending("staging/c.gif"), bytes: 4000)
        try FileManager.default.moveItem(
            atPath: harness.directory.appending("staging/sub").string,
            toPath: harness.inbox.appending("sub").string
        )
        try harness.moveIn(["b.gif", "c.gif"], from: harness.directory.appending("staging"))
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Job completed", count: 2)
        try await daemon.waitForLog("Job failed", count: 1)

        let metaSidecar = harness.directory.appending("meta/sub/a.jpg" + Sidecar.fileSuffix)
        let data = try #require(FileManager.default.contents(atPath: metaSidecar.string), "no \(metaSidecar)")
        let sidecar = try JSONDecoder().decode(Sidecar.self, from: data)
        #expect(sidecar.output?.path == harness.outbox.appending("sub/a.jpg").string)
        #expect(FileManager.default.fileExists(atPath: harness.outbox.appending("quiet/b.png").string))
        let failed = try #require(harness.sidecars()["quiet/c.png" + Sidecar.fileSuffix])
        #expect(failed.status == .failed)
        // Nothing else: no sidecar beside a.jpg, none for the completed b.png.
        #expect(harness.sidecars().keys.sorted() == ["quiet/c.png" + Sidecar.fileSuffix])
    }

    @Test func recoveryWritesTheSidecarWhereTheRuleSays() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: meta
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    sidecars: ./meta
                """
        )
        defer { harness.stop() }
        // The daemon kills itself right after the output is renamed into place, before its sidecar is written.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("a.png"))
        try harness.moveIn(["a.png"], from: staging)
        let first = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(first.signalled, "the crash point killed the daemon")
        #expect(!FileManager.default.fileExists(atPath: harness.directory.appending("meta").string))

        try await harness.start()
        let opened = try #require(harness.daemon?.logLines(containing: "Journal opened").first)
        #expect(opened.contains("completed=1"), "\(opened)")
        let metaSidecar = harness.directory.appending("meta/a.jpg" + Sidecar.fileSuffix)
        #expect(FileManager.default.fileExists(atPath: metaSidecar.string))
        #expect(harness.sidecars().isEmpty)
    }
}
