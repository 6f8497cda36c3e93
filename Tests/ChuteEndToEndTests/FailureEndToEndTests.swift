import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon meets bad input, a killed worker and SIGTERM, and keeps its promises.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct FailureEndToEndTests {
    @Test func corruptImageFailsClearlyAndTheNextFileIsProcessed() async throws {
        // A cut-off JPEG looks like one still being written; it is waited for `incompleteTimeout`, shortened here.
        let harness = try DaemonHarness(settings: "  incompleteTimeout: 1s")
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("whole.jpg"), width: 800, height: 600)
        try Fixtures.truncatedCopy(
            of: staging.appending("whole.jpg"),
            to: staging.appending("broken.jpg"),
            keeping: 0.3
        )
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        let brokenBytes = try Data(contentsOf: URL(fileURLWithPath: staging.appending("broken.jpg").string))
        for name in ["broken.jpg", "noise.png"] {
            try FileManager.default.moveItem(
                atPath: staging.appending(name).string,
                toPath: harness.inbox.appending(name).string
            )
        }
        let failed = try await harness.waitForSidecars(2)
        let broken = try #require(failed["broken.jpg.chute.json"])
        #expect(broken.status == .failed)
        #expect(broken.output == nil)
        let brokenError = try #require(broken.error)
        #expect(brokenError.code == "corruptInput")
        #expect(!brokenError.message.isEmpty)
        let noise = try #require(failed["noise.jpg.chute.json"])
        #expect(noise.error?.code == "unsupportedInput")
        // The source is untouched, and the log says what failed.
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.inbox.appending("broken.jpg").string)) == brokenBytes)
        #expect(harness.daemon?.logLines(containing: "Job failed", "broken.jpg").count == 1)
        #expect(harness.daemon?.logLines(containing: "Taking a file that is still not ready", "broken.jpg").count == 1)
        // The daemon goes on with the next file.
        try FileManager.default.moveItem(
            atPath: staging.appending("whole.jpg").string,
            toPath: harness.inbox.appending("whole.jpg").string
        )
        let all = try await harness.waitForSidecars(3)
        #expect(all["whole.jpg.chute.json"]?.status == .completed)
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// A failed job whose sidecar cannot be written (its `sidecars` folder is a file) says so, naming where it tried,
    /// and its `Job failed` record names no sidecar: it names only a sidecar that is there.
    @Test func aSidecarThatCannotBeWrittenIsNotNamedAsWritten() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    sidecars: ./meta
                """
        )
        defer { harness.stop() }
        let meta = harness.directory.appending("meta")
        try "not a folder\n".write(toFile: meta.string, atomically: true, encoding: .utf8)
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        try harness.moveIn(["noise.png"], from: staging)
        let daemon = try #require(harness.daemon)
        let failed = try await daemon.waitForLog("Job failed", "noise.png")
        print("sidecar: \(failed[0])")
        #expect(Logfmt.parse(failed[0])?["sidecar"] == "none", "\(failed[0])")
        let unwritten = daemon.logLines(containing: "Cannot write the sidecar of a job that converted nothing")
        #expect(unwritten.first?.contains(meta.appending("noise.jpg.chute.json").string) == true)
    }

    @Test func workerKilledDuringAJobFailsThatJobOnly() async throws {
        let (harness, _, workers) = try await Self.startSlowJob(named: "big.png")
        defer { harness.stop() }
        for worker in workers { kill(worker, SIGKILL) }
        let sidecars = try await harness.waitForSidecars(1)
        let killed = try #require(sidecars["big.heic.chute.json"])
        #expect(killed.status == .failed)
        #expect(killed.error?.code == "workerCrashed")
        #expect(killed.error?.message.contains("SIGKILL") == true)
        #expect(harness.temporaryFiles().isEmpty)
        // The next job runs, on a new worker.
        try Fixtures.makeImage(at: harness.inbox.appending("next.png"), width: 64, height: 48)
        let after = try await harness.waitForSidecars(2)
        #expect(after["next.heic.chute.json"]?.status == .completed)
    }

    @Test func workerEndsItselfWhenTheDaemonIsKilled() async throws {
        let (harness, daemon, workers) = try await Self.startSlowJob(named: "big.png")
        defer { harness.stop() }
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)
        // The worker is in the middle of a C call that takes over 20 s on this machine (longer under load), and would
        // only notice its closed input after it: it must end long before, without converting for a dead daemon.
        try await waitUntil("the orphaned worker to exit", timeout: 10) {
            workers.allSatisfy { kill($0, 0) != 0 } ? true : nil
        }
    }

    @Test func sigtermDuringAJobExitsZeroAndLeavesNoTemporaryFiles() async throws {
        let (harness, daemon, workers) = try await Self.startSlowJob(named: "slow.png", gracePeriod: "1s")
        defer { harness.stop() }
        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0 && !exit.signalled)
        #expect(daemon.logLines(containing: "Job cancelled by shutdown").count == 1)
        #expect(harness.temporaryFiles().isEmpty)
        // An interrupted job leaves no record, so the next start takes the file again.
        #expect(harness.sidecars().isEmpty)
        // No worker outlives the daemon.
        try await waitUntil("the worker to be gone") { workers.allSatisfy { kill($0, 0) != 0 } ? true : nil }
    }

    @Test func sigtermLetsARunningJobFinishWithinTheGracePeriod() async throws {
        let harness = try DaemonHarness(settings: "  concurrency: {image: 1}")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Fixtures.makeImage(at: harness.inbox.appending("quick.png"), width: 2000, height: 1500)
        try await daemon.waitForLog("Job started", "quick.png")
        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0)
        let sidecar = harness.sidecars()["quick.jpg.chute.json"]
        #expect(sidecar?.status == .completed, "\(String(describing: sidecar?.error))")
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// Starts the daemon with a HEIC rule and one image lane, drops in a 4000x3000 PNG, whose HEIC encode takes many
    /// seconds (long enough to kill or stop things in the middle of it), and waits until its job has started.
    ///
    /// - Returns: the harness (which the caller stops), the daemon, and its worker processes (one).
    private static func startSlowJob(
        named name: String,
        gracePeriod: String = "10s"
    ) async throws -> (DaemonHarness, ChuteProcess, [Int32]) {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-heic
                    match: "*.png"
                    to: heic
                    output: ./outbox
                """,
            settings: "  concurrency: {image: 1}",
            gracePeriod: gracePeriod
        )
        do {
            try await harness.start()
            let daemon = try #require(harness.daemon)
            let staging = try harness.directory.makeDirectory("staging")
            try Fixtures.makeImage(at: staging.appending(name), width: 4000, height: 3000)
            try FileManager.default.moveItem(
                atPath: staging.appending(name).string,
                toPath: harness.inbox.appending(name).string
            )
            try await daemon.waitForLog("Job started", name)
            let workers = try CommandLineTool.run(["pgrep", "-P", "\(daemon.pid)"]).standardOutput
                .split(separator: "\n").compactMap { Int32($0) }
            #expect(workers.count == 1)
            return (harness, daemon, workers)
        } catch {
            harness.stop()
            throw error
        }
    }
}
