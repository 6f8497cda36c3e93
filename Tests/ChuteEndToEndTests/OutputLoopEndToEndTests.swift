import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A rule whose output folder is the watched folder: the daemon never takes its own outputs as new inputs, and
/// `onConflict: overwrite` never replaces a source.
@Suite(.timeLimit(.minutes(3)))
struct OutputLoopEndToEndTests {
    /// A daemon watching `inbox` with one rule writing 300-pixel JPEGs back into `inbox`, and the sentinel rule.
    private func harness(onConflict: String) throws -> DaemonHarness {
        try DaemonHarness(
            afterSentinels: """
                  - name: small
                    match: "*.jpg"
                    to: jpg
                    width: 300
                    output: ./inbox
                    onConflict: \(onConflict)
                """
        )
    }

    /// The inbox's file names, sorted, without the sentinels.
    private func inboxNames(_ harness: DaemonHarness) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: harness.inbox.string)
            .filter { !$0.hasPrefix("zz-sentinel-") }.sorted()
    }

    private func contents(_ path: FilePath) throws -> Data {
        try Data(contentsOf: URL(fileURLWithPath: path.string))
    }

    /// Drops `photo.jpg`, waits for the rule's one job and for a sentinel after it, and returns the daemon's
    /// completed jobs of the rule and the photo's bytes as dropped.
    private func dropPhotoAndSettle(_ harness: DaemonHarness) async throws -> (completed: [String], original: Data) {
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.jpg"), width: 640, height: 480)
        let original = try self.contents(staging.appending("photo.jpg"))
        try harness.moveIn(["photo.jpg"], from: staging)
        let daemon = try #require(harness.daemon)
        try await waitUntil("the photo's job", timeout: 60) {
            daemon.logLines(containing: "Job completed", "rule.name=small").isEmpty ? nil : true
        }
        // Outputs are events in the watched folder like any other: a sentinel dropped after the output appeared is
        // taken after any job the output would start.
        try await harness.waitForSidecars(0)
        try await harness.waitForSidecars(0)
        return (daemon.logLines(containing: "Job completed", "rule.name=small"), original)
    }

    @Test func anOutputWrittenIntoTheWatchedFolderIsNotTakenAgain() async throws {
        let harness = try self.harness(onConflict: "rename")
        defer { harness.stop() }
        try await harness.start()
        let (completed, _) = try await self.dropPhotoAndSettle(harness)
        print("output loop: \(completed.count) job(s) completed; inbox: \(try self.inboxNames(harness))")
        #expect(completed.count == 1, "\(completed)")
        #expect(try self.inboxNames(harness) == ["photo-1.jpg", "photo-1.jpg.chute.json", "photo.jpg"])

        // After a restart, the scan finds the output again: the journal knows it as an output, not a new file.
        harness.daemon?.terminate()
        try await harness.start()
        try await harness.waitForSidecars(0)
        let daemon = try #require(harness.daemon)
        #expect(daemon.logLines(containing: "Job completed", "rule.name=small").isEmpty)
        #expect(try self.inboxNames(harness) == ["photo-1.jpg", "photo-1.jpg.chute.json", "photo.jpg"])
    }

    @Test func overwriteNeverReplacesTheSourceInTheWatchedFolder() async throws {
        let harness = try self.harness(onConflict: "overwrite")
        defer { harness.stop() }
        try await harness.start()
        let (completed, original) = try await self.dropPhotoAndSettle(harness)
        #expect(completed.count == 1, "\(completed)")
        let names = try self.inboxNames(harness)
        print("overwrite into the watched folder: inbox \(names)")
        #expect(names == ["photo-1.jpg", "photo-1.jpg.chute.json", "photo.jpg"])
        #expect(try self.contents(harness.inbox.appending("photo.jpg")) == original)
        let sidecar = try JSONDecoder().decode(
            Sidecar.self,
            from: self.contents(harness.inbox.appending("photo-1.jpg.chute.json"))
        )
        #expect(sidecar.warnings.contains { $0.contains("not replaced") && $0.contains("photo.jpg") }, "\(sidecar)")
    }

    /// `chute check` on the folder mistakes users make: warnings for an output, done folder or quarantine that is (or
    /// holds) a watched folder, for nested watches and a quarantine that is the output; an error for a done folder
    /// that is the watched folder.
    @Test func checkWarnsAboutFoldersThatOverlapTheWatch() async throws {
        let directory = try TemporaryDirectory(prefix: "check")
        defer { directory.remove() }
        let config = directory.appending("rules.yaml")
        try """
        watch:
          - path: ./in
          - path: ./in/scans
        rules:
          - name: back-in
            match: "*.jpg"
            to: jpg
            output: ./in
          - name: failing
            match: "*.png"
            to: jpg
            output: ./out
            quarantine: ./out
          - name: above
            match: "*.gif"
            to: png
            output: .
            source: move
            doneFolder: ./done
        """.write(toFile: config.string, atomically: true, encoding: .utf8)
        let check = try ChuteProcess(["check", config.string])
        #expect(try await check.waitForExit().status == 0, "\(check.log)")
        let warnings = check.output.filter { $0.hasPrefix("warning:") }
        print("check: \(warnings.joined(separator: "\n"))")
        #expect(
            warnings.contains {
                $0.contains("rule 'back-in'")
                    && $0.contains("'output: \(directory.appending("in"))' is the watched folder")
            }
        )
        #expect(
            warnings.contains { $0.contains("rule 'failing'") && $0.contains("'quarantine' and 'output' are both") }
        )
        #expect(warnings.contains { $0.contains("rule 'above'") && $0.contains("holds the watched folder") })
        #expect(warnings.contains { $0.contains("\(directory.appending("in/scans")) is inside the watched folder") })

        try """
        watch:
          - path: ./in
        rules:
          - name: done-in-place
            match: "*.jpg"
            to: png
            output: ./out
            source: move
            doneFolder: ./in
        """.write(toFile: config.string, atomically: true, encoding: .utf8)
        let refused = try ChuteProcess(["check", config.string])
        #expect(try await refused.waitForExit().status != 0)
        print("check: \(refused.log.joined(separator: "\n"))")
        #expect(
            refused.log.contains { $0.contains("rules.yaml:9:") && $0.contains("'doneFolder' is the watched folder") }
        )
    }
}
