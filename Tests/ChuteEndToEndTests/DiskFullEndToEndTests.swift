import ChuteCore
import ChuteTestSupport
import Foundation
import Glibc
import SystemPackage
import Testing

/// A target file system that fills up: the job stops cleanly, nothing half-written stays, the source is kept, and the
/// file is converted once there is room again. Mounting a small file system needs root, which CI is.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: geteuid() == 0, "mounting needs root"))
struct DiskFullEndToEndTests {
    @Test func aFullTargetFailsCleanlyKeepsTheSourceAndResumesWhenSpaceIsBack() async throws {
        let harness = try DaemonHarness(settings: "  retryDelay: 1s")
        defer { harness.stop() }
        try FileManager.default.createDirectory(atPath: harness.outbox.string, withIntermediateDirectories: true)
        try CommandLineTool.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", harness.outbox.string])
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", harness.outbox.string]) }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        // A noisy 2400x1800 photo: its JPEG (about 44 KB) does not fit in the 16 KiB target.
        try Fixtures.makeImage(at: staging.appending("big.png"), width: 2400, height: 1800)
        let source = try Data(contentsOf: URL(fileURLWithPath: staging.appending("big.png").string))
        try FileManager.default.moveItem(
            atPath: staging.appending("big.png").string,
            toPath: harness.inbox.appending("big.png").string
        )

        try await waitUntil("the job to be postponed for a full disk") {
            daemon.logLines(containing: "Job postponed", "diskFull").isEmpty ? nil : true
        }
        #expect(harness.temporaryFiles().isEmpty, "no half-written output stays")
        #expect(harness.directory.files(below: "outbox").isEmpty, "nothing, not even a failed sidecar")
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.inbox.appending("big.png").string)) == source)

        // Room again: the back-off brings the file back, without any new event.
        try CommandLineTool.run(["mount", "-o", "remount,size=64m", harness.outbox.string])
        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["big.jpg.chute.json"]?.status == .completed)
        let output = try Fixtures.identify(harness.outbox.appending("big.jpg"))
        #expect(output.width == 2400 && output.height == 1800)
        #expect(!daemon.logLines(containing: "Trying the file again later", "big.png").isEmpty)
        #expect(harness.temporaryFiles().isEmpty)
        // The metrics count the postponement, and the completed job once the file came back.
        let metrics = try await waitUntil("the metrics to count the completed job") {
            let metrics = try harness.metrics()
            return metrics.value("chute_jobs_finished_total", ["outcome": "completed", "rule": "to-jpg"]) != nil
                ? metrics : nil
        }
        #expect((metrics.value("chute_disk_full_postponements_total") ?? 0) >= 1)
        #expect((metrics.value("chute_jobs_finished_total", ["outcome": "postponed", "rule": "to-jpg"]) ?? 0) >= 1)
    }

    /// `GET` or `POST` on the daemon's socket with curl, the body parsed as JSON.
    private func api(_ harness: DaemonHarness, _ method: String, _ path: String) throws -> [String: Any] {
        let socket = harness.directory.appending(".chute/api.sock")
        let text = try CommandLineTool.run([
            "curl", "-sS", "--max-time", "30", "--unix-socket", socket.string, "-X", method, "http://chute\(path)",
        ]).standardOutput
        return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "\(text)")
    }

    /// A daemon on a 16 KiB target, with `big.png` dropped, once its job was postponed for the full disk: returns
    /// the postponed job as `GET /api/jobs?state=postponed` lists it.
    private func postponeBigPhoto(_ harness: DaemonHarness) async throws -> [String: Any] {
        try FileManager.default.createDirectory(atPath: harness.outbox.string, withIntermediateDirectories: true)
        try CommandLineTool.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", harness.outbox.string])
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("big.png"), width: 2400, height: 1800)
        try harness.moveIn(["big.png"], from: staging)
        return try await waitUntil("the postponed job to be listed") {
            let jobs = try self.api(harness, "GET", "/api/jobs?state=postponed")["jobs"] as? [[String: Any]]
            return jobs?.first
        }
    }

    /// A job postponed for a full disk is listed as `postponed` with why and when it is tried again, and fails as
    /// `diskFull`, with the sizes, at its `retryLimit`-th try.
    @Test func aPostponedJobIsShownAndFailsAtTheRetryLimit() async throws {
        let harness = try DaemonHarness(settings: "  retryDelay: 1s\n  retryLimit: 3")
        defer { harness.stop() }
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", harness.outbox.string]) }
        let postponed = try await self.postponeBigPhoto(harness)
        print("postponed job: \(postponed)")
        #expect(postponed["state"] as? String == "postponed")
        #expect((postponed["message"] as? String)?.contains("disk full") == true)
        #expect(postponed["retryAt"] != nil)
        let counts = try #require(try self.api(harness, "GET", "/api/status")["counts"] as? [String: Int])
        #expect(counts["postponed"] == 1, "\(counts)")
        let jobs = try ChuteProcess(["jobs", "--config", harness.configPath.string])
        _ = try await jobs.waitForExit()
        print("chute jobs: \(jobs.output.joined(separator: "\n"))")
        #expect(jobs.output.contains { $0.hasPrefix("postponed") && $0.contains("big.png") })
        #expect(jobs.output.contains { $0.contains("disk full") && $0.contains("tried again at") })

        let daemon = try #require(harness.daemon)
        let failed = try await daemon.waitForLog("Job failed", "diskFull", timeout: 60)
        print("given up: \(failed)")
        #expect(failed.first?.contains("gave up after 3 tries (retryLimit)") == true)
        #expect(failed.first?.contains("free of") == true && failed.first?.contains("for a source of") == true)
        #expect(daemon.logLines(containing: "Job postponed", "diskFull").count == 2)
        let sidecar = try #require(harness.sidecars()["big.jpg" + Sidecar.fileSuffix])
        #expect(sidecar.status == .failed && sidecar.error?.code == "diskFull")
        let after = try self.api(harness, "GET", "/api/jobs?state=postponed")["jobs"] as? [[String: Any]]
        #expect(after?.isEmpty == true)
    }

    /// A postponed job can be cancelled: it leaves the list, and its file is not tried again when the retry is due.
    @Test func aPostponedJobCanBeCancelled() async throws {
        let harness = try DaemonHarness(settings: "  retryDelay: 2s")
        defer { harness.stop() }
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", harness.outbox.string]) }
        let postponed = try await self.postponeBigPhoto(harness)
        let id = try #require(postponed["id"] as? String)
        let answer = try self.api(harness, "POST", "/api/jobs/\(id)/cancel")
        print("cancel a postponed job: \(answer)")
        #expect(answer["state"] as? String == "cancelled")
        let listed = try self.api(harness, "GET", "/api/jobs?state=postponed")["jobs"] as? [[String: Any]]
        #expect(listed?.isEmpty == true)

        // Room again, and the retry's time passed: the file stays as it is.
        try CommandLineTool.run(["mount", "-o", "remount,size=64m", harness.outbox.string])
        let retryAt = try #require((postponed["retryAt"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        try await waitUntil("the retry's time to pass") { Date() > retryAt + 1 ? true : nil }
        try await harness.waitForSidecars(0)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("big.jpg").string))
        let daemon = try #require(harness.daemon)
        #expect(daemon.logLines(containing: "Job started", "big.png").count == 1)
    }

    /// A target mounted read-only: the job is postponed, not failed, and the file is converted once the target is
    /// writable again, as after a full disk.
    @Test func aReadOnlyTargetIsTriedAgainOnceItIsWritable() async throws {
        let harness = try DaemonHarness(settings: "  retryDelay: 1s")
        defer { harness.stop() }
        try FileManager.default.createDirectory(atPath: harness.outbox.string, withIntermediateDirectories: true)
        try CommandLineTool.run(["mount", "-t", "tmpfs", "-o", "ro,size=16m", "tmpfs", harness.outbox.string])
        defer { _ = try? CommandLineTool.run(["umount", "--lazy", harness.outbox.string]) }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: 64, height: 48)
        try harness.moveIn(["photo.png"], from: staging)

        let ended = try await waitUntil("the job to end or be postponed") {
            (daemon.logLines(containing: "Job postponed", "photo.png")
                + daemon.logLines(containing: "Job failed", "photo.png")).first
        }
        print("read-only target: \(ended)")
        #expect(ended.contains("targetReadOnly"), "\(ended)")

        try CommandLineTool.run(["mount", "-o", "remount,rw", harness.outbox.string])
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["photo.jpg.chute.json"]?.status == .completed)
        #expect(try Fixtures.identify(harness.outbox.appending("photo.jpg")).width == 64)
    }
}
