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
