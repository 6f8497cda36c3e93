import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The daemon's life on the real `chute run`: one daemon per journal, signals that reload the rules or report status,
/// watched folders that appear after the start, and a shutdown in the middle of a job.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct LifecycleEndToEndTests {
    @Test func aSecondDaemonOnTheSameJournalRefusesToStart() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let first = try #require(harness.daemon)

        let second = try ChuteProcess(["run", "--config", harness.configPath.string])
        defer { second.terminate() }
        let exit = try await second.waitForExit(timeout: 30)
        #expect(exit.status != 0 && !exit.signalled)
        let refusal = second.log.joined(separator: "\n")
        #expect(refusal.contains("pid \(first.pid)"), "\(refusal)")
        #expect(refusal.contains("journal.sqlite"), "\(refusal)")

        // The first daemon goes on converting, alone.
        try Fixtures.makeImage(at: harness.inbox.appending("after.png"), width: 64, height: 48)
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["after.jpg.chute.json"]?.status == .completed)
    }

    @Test func sighupReloadsTheRulesAndSigusr1LogsTheStatus() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)

        daemon.send(SIGUSR1)
        let status = try await daemon.waitForLog("msg=Status ")
        #expect(status[0].contains("queued=0") && status[0].contains("running=0"), "\(status[0])")
        #expect(status[0].contains("cpu.used=0") && status[0].contains("memory.used=0"), "\(status[0])")

        try Self.edit(harness.configPath, replacing: "quality: 0.85", with: "quality: 0.30")
        daemon.send(SIGHUP)
        try await daemon.waitForLog("Rules reloaded")
        try Fixtures.makeImage(at: harness.inbox.appending("after.png"), width: 200, height: 150)
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["after.jpg.chute.json"]?.status == .completed)
        #expect(try Fixtures.identify(harness.outbox.appending("after.jpg")).quality == 30)
        #expect(daemon.logLines(containing: "error").isEmpty)
    }

    @Test func aBrokenRulesFileOnSighupKeepsTheOldRules() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)

        try Self.edit(harness.configPath, replacing: "quality: 0.85", with: "quality: high")
        let line = try #require(try Self.lineNumber(of: "quality: high", in: harness.configPath))
        daemon.send(SIGHUP)
        let refusal = try await daemon.waitForLog("Rules not reloaded")
        #expect(refusal[0].contains("error"), "\(refusal[0])")
        #expect(refusal[0].contains("\(harness.configPath):\(line):"), "\(refusal[0])")

        try Fixtures.makeImage(at: harness.inbox.appending("after.png"), width: 200, height: 150)
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["after.jpg.chute.json"]?.status == .completed)
        #expect(try Fixtures.identify(harness.outbox.appending("after.jpg")).quality == 85)
    }

    @Test func aWatchedFolderThatAppearsLaterIsWaitedForThenWatched() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try FileManager.default.removeItem(atPath: harness.inbox.string)

        let check = try ChuteProcess(["check", harness.configPath.string])
        #expect(try await check.waitForExit().status == 0)
        let warnings = check.output.filter { $0.hasPrefix("warning:") && $0.contains("\(harness.inbox)") }
        #expect(warnings.count == 1, "\(check.output)")

        let daemon = try ChuteProcess(["run", "--config", harness.configPath.string, "--log-level", "debug"])
        defer { daemon.terminate() }
        try await daemon.waitForLog("Waiting for watched folder to appear", "\(harness.inbox)")
        // A daemon watching nothing does not call itself ready.
        #expect(daemon.logLines(containing: "Watcher ready").isEmpty)

        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("early.png"), width: 64, height: 48)
        try FileManager.default.createDirectory(atPath: harness.inbox.string, withIntermediateDirectories: false)
        try harness.moveIn(["early.png"], from: staging)
        try await daemon.waitForLog("Watcher ready")
        try Fixtures.makeImage(at: harness.inbox.appending("late.png"), width: 64, height: 48)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["early.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["late.jpg.chute.json"]?.status == .completed)
        #expect(daemon.logLines(containing: "Waiting for watched folder to appear").count == 1)
    }

    @Test func sigtermInTheMiddleOfAJobRecordsItAsInterruptedAndTheRestartRunsIt() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-heic
                    match: "*.png"
                    to: heic
                    output: ./outbox
                """,
            settings: "  concurrency: {image: 1}",
            gracePeriod: "1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        // A 3000x2000 HEIC encode takes several seconds, far beyond the grace period.
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("slow.png"), width: 3000, height: 2000)
        try harness.moveIn(["slow.png"], from: staging)
        try await daemon.waitForLog("Job started", "slow.png")

        daemon.send(SIGTERM)
        let exit = try await daemon.waitForExit(timeout: 30)
        #expect(exit.status == 0 && !exit.signalled)
        #expect(daemon.logLines(containing: "Job cancelled by shutdown").count == 1)
        #expect(daemon.logLines(containing: "Cannot update the journal").isEmpty, "\(daemon.log)")
        #expect(daemon.logLines(containing: " error ").isEmpty, "\(daemon.log)")
        let journal = harness.directory.appending(".chute/journal.sqlite")
        let states = try CommandLineTool.run(["sqlite3", journal.string, "SELECT state FROM job"]).standardOutput
            .split(separator: "\n").map(String.init)
        #expect(states == ["interrupted"])

        try await harness.start()
        let restarted = try #require(harness.daemon)
        let opened = try await restarted.waitForLog("Journal opened")
        // The counts say they are of the unfinished jobs: a bare `completed=0` read as "nothing done".
        print("lifecycle: \(opened[0])")
        #expect(opened[0].contains("jobs an earlier run left unfinished"), "\(opened[0])")
        #expect(opened[0].contains("unfinished.interrupted=1"), "\(opened[0])")
        let sidecars = try await harness.waitForSidecars(1, timeout: 240)
        #expect(sidecars["slow.heic.chute.json"]?.status == .completed)
    }

    /// Replaces the first occurrence of `old` in a file.
    private static func edit(_ path: FilePath, replacing old: String, with new: String) throws {
        let text = try String(contentsOfFile: path.string, encoding: .utf8)
        let range = try #require(text.range(of: old), "\(old) in \(text)")
        try text.replacingCharacters(in: range, with: new).write(toFile: path.string, atomically: true, encoding: .utf8)
    }

    /// The 1-based number of the first line of a file that contains `fragment`.
    private static func lineNumber(of fragment: String, in path: FilePath) throws -> Int? {
        let lines = try String(contentsOfFile: path.string, encoding: .utf8).split(
            separator: "\n",
            omittingEmptySubsequences: false
        )
        return lines.firstIndex { $0.contains(fragment) }.map { $0 + 1 }
    }
}
