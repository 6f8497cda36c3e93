import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Several `chute run` agents sharing one PostgreSQL database and one folder: the work spread between them with none
/// done twice, a killed agent's job taken over once its lease ran out, and the late result of a paused agent refused.
@Suite struct AgentsEndToEndTests {
    /// Agents on one machine, each in a folder of its own (its rules, its `.chute`), watching one shared inbox.
    private final class Agents {
        let server: PostgresServer
        let shared: TemporaryDirectory
        let inbox: FilePath
        let outbox: FilePath
        private(set) var folders: [String: TemporaryDirectory] = [:]
        private(set) var daemons: [String: ChuteProcess] = [:]

        /// - Parameters:
        ///   - rules: the rules (YAML list items indented by two spaces), with `OUTBOX` for the shared outbox.
        ///   - lease: each agent's `agentLease`.
        ///   - settings: more settings of some agents, by name (lines indented by two spaces).
        init(_ names: [String], rules: String, lease: String = "30s", settings: [String: String] = [:]) throws {
            self.server = try PostgresServer()
            self.shared = try TemporaryDirectory(prefix: "agents")
            self.inbox = try self.shared.makeDirectory("inbox")
            self.outbox = try self.shared.makeDirectory("outbox")
            for name in names {
                let folder = try TemporaryDirectory(prefix: "agent-\(name)")
                let yaml = """
                    watch:
                      - path: \(self.inbox)
                    rules:
                    \(rules.replacingOccurrences(of: "OUTBOX", with: self.outbox.string))
                    settings:
                      quietPeriod: 300ms
                      gracePeriod: 10s
                      concurrency:
                        image: 1
                        video: 1
                      store: \(self.server.address)
                      storePasswordFile: \(self.server.passwordFile)
                      agent: \(name)
                      agentLease: \(lease)
                    \(settings[name] ?? "")
                    """
                try yaml.write(toFile: folder.appending("rules.yaml").string, atomically: true, encoding: .utf8)
                self.folders[name] = folder
            }
        }

        /// Starts an agent and waits until it watches (`ready`), or for an agent that watches nothing until it runs.
        func start(_ name: String, ready: String = "Watcher ready", environment: [String: String] = [:]) async throws {
            let folder = try #require(self.folders[name])
            let daemon = try ChuteProcess(
                ["run", "--config", folder.appending("rules.yaml").string, "--log-level", "debug"],
                environment: environment
            )
            self.daemons[name] = daemon
            try await daemon.waitForLog(ready)
        }

        func daemon(_ name: String) throws -> ChuteProcess { try #require(self.daemons[name]) }

        /// The outputs in the outbox.
        func outputs(_ suffix: String) -> [String] {
            self.shared.files(below: "outbox").filter { $0.hasSuffix(suffix) }
        }

        /// The number of sidecars in the outbox.
        var sidecars: Int { self.shared.files(below: "outbox").filter { $0.hasSuffix(Sidecar.fileSuffix) }.count }

        func stop() {
            for daemon in self.daemons.values { daemon.terminate() }
            for folder in self.folders.values { folder.remove() }
            self.shared.remove()
            self.server.stop()
        }
    }

    private static let photos = """
          - name: to-jpg
            match: "*.png"
            to: jpg
            output: OUTBOX
        """

    private static let clips = """
          - name: clips
            match: "*.mov"
            to: mp4
            shortSide: 360
            output: OUTBOX
        """

    @Test func threeAgentsShareThreeHundredFilesAndConvertEachOnce() async throws {
        let names = ["north", "south", "west"]
        let agents = try Agents(names, rules: Self.photos)
        defer { agents.stop() }
        let staging = try agents.shared.makeDirectory("staging")
        let files = (0..<300).map { String(format: "scan%03d.png", $0) }
        for (index, file) in files.enumerated() {
            try Fixtures.makeImage(at: staging.appending(file), width: 96 + index % 7, height: 64)
        }
        for name in names { try await agents.start(name) }
        for file in files {
            try FileManager.default.moveItem(
                atPath: staging.appending(file).string,
                toPath: agents.inbox.appending(file).string
            )
        }
        try await waitUntil("300 sidecars", timeout: 400) { agents.sidecars >= files.count ? true : nil }
        try await waitUntil("every job recorded as completed", timeout: 60) {
            try agents.server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed'") == "300" ? true : nil
        }

        let outputs = agents.outputs(".jpg")
        var started: [String: Int] = [:]
        for name in names {
            started[name] = try agents.daemon(name).logLines(containing: "Job started", "scan").count
        }
        let byAgent = try agents.server.psql(
            "SELECT string_agg(agent || '=' || n, ' ' ORDER BY agent) FROM "
                + "(SELECT agent, COUNT(*) AS n FROM job WHERE state = 'completed' GROUP BY agent) AS done"
        )
        let rows = try agents.server.psql("SELECT COUNT(*) FROM job")
        let versions = try agents.server.psql("SELECT COUNT(DISTINCT source) FROM job")
        print(
            "3 agents, 300 files: \(outputs.count) outputs, \(Set(outputs).count) distinct, rows \(rows) for "
                + "\(versions) sources; completed per agent in the store: \(byAgent); jobs started per agent's log: "
                + names.map { "\($0)=\(started[$0] ?? 0)" }.joined(separator: " ")
        )
        #expect(outputs.sorted() == files.map { $0.replacingOccurrences(of: ".png", with: ".jpg") }.sorted())
        #expect(rows == "300" && versions == "300", "one job per file")
        #expect(started.values.reduce(0, +) == 300, "no file converted twice: \(started)")
        #expect(started.values.allSatisfy { $0 > 0 }, "each agent did some of the work: \(started)")
        #expect(agents.shared.files().filter { $0.contains(".chute-") }.isEmpty, "no temporary file is left")
        // Each sidecar names the agent that ran its job, as the store does.
        let sidecar = try JSONDecoder().decode(
            Sidecar.self,
            from: Data(contentsOf: URL(fileURLWithPath: agents.outbox.appending("scan007.jpg.chute.json").string))
        )
        let recorded = try agents.server.psql("SELECT agent FROM job WHERE id = '\(sidecar.jobID)'")
        print("scan007's sidecar: agent \(sidecar.agent ?? "none"), the store: \(recorded)")
        #expect(sidecar.agent == recorded && names.contains(recorded))

        // Every agent shows in any agent's status, with the jobs it did; the history and the metrics name the agent.
        let config = try #require(agents.folders["south"]).appending("rules.yaml").string
        let status = try ChuteProcess(["status", "--config", config])
        #expect(try await status.waitForExit().status == 0, "\(status.log)")
        let lines = status.output.filter {
            $0.hasPrefix("  north ") || $0.hasPrefix("  south ") || $0.hasPrefix("  west ")
        }
        print("chute status on south:\n" + status.output.joined(separator: "\n"))
        #expect(status.output.contains("Agents (this one is south):"))
        #expect(lines.count == 3 && lines.allSatisfy { $0.contains(": alive, last heartbeat") }, "\(lines)")
        for name in names {
            #expect(lines.contains { $0.hasPrefix("  \(name) ") && $0.contains("completed \(started[name] ?? -1)") })
        }
        let socket = try #require(agents.folders["west"]).appending(".chute/api.sock").string
        let jobs = try CommandLineTool.run([
            "curl", "-sS", "--fail", "--unix-socket", socket, "http://chute/api/jobs?state=completed&limit=1000",
        ]).standardOutput
        let listed = try #require(try JSONSerialization.jsonObject(with: Data(jobs.utf8)) as? [String: Any])
        let ranBy = (listed["jobs"] as? [[String: Any]] ?? []).compactMap { $0["agent"] as? String }
        #expect(ranBy.count == 300 && Set(ranBy) == Set(names), "the history names the agent of each job")
        let metrics = try CommandLineTool.run([
            "curl", "-sS", "--fail", "--unix-socket", socket, "http://chute/metrics",
        ]).standardOutput
        let finished = metrics.split(separator: "\n").filter { $0.hasPrefix("chute_jobs_finished_total{") }
        print("west's metrics: \(finished.joined(separator: "; "))")
        #expect(finished.contains { $0.contains("agent=\"west\"") && $0.hasSuffix(" \(started["west"] ?? -1)") })
    }

    /// An agent with `watch: false` watches nothing, and converts files that the watching agent found.
    @Test func anAgentThatWatchesNothingConvertsFilesAnotherFound() async throws {
        let agents = try Agents(["finder", "helper"], rules: Self.photos, settings: ["helper": "  watch: false"])
        defer { agents.stop() }
        let staging = try agents.shared.makeDirectory("staging")
        let files = (0..<120).map { String(format: "card%03d.png", $0) }
        for (index, file) in files.enumerated() {
            try Fixtures.makeImage(at: staging.appending(file), width: 96 + index % 7, height: 64)
        }
        try await agents.start("finder")
        try await agents.start("helper", ready: "Chute started")
        let helper = try agents.daemon("helper")
        #expect(helper.logLines(containing: "Watcher ready").isEmpty)
        #expect(!helper.logLines(containing: "Watching no folder").isEmpty)
        for file in files {
            try FileManager.default.moveItem(
                atPath: staging.appending(file).string,
                toPath: agents.inbox.appending(file).string
            )
        }
        try await waitUntil("120 sidecars", timeout: 300) { agents.sidecars >= files.count ? true : nil }
        try await waitUntil("every job recorded as completed", timeout: 60) {
            try agents.server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed'") == "120" ? true : nil
        }
        let started = try ["finder", "helper"].map {
            try agents.daemon($0).logLines(containing: "Job started", "card").count
        }
        let offered = try agents.daemon("finder").logLines(containing: "Job queued", "card").count
        print(
            "a watching agent and one with watch: false, 120 files: \(agents.outputs(".jpg").count) outputs; "
                + "offered by the finder \(offered); jobs started: finder \(started[0]), helper \(started[1])"
        )
        #expect(agents.outputs(".jpg").count == 120)
        #expect(try agents.server.psql("SELECT COUNT(*) FROM job") == "120")
        #expect(offered == 120 && started.reduce(0, +) == 120)
        #expect(started.allSatisfy { $0 > 0 }, "both agents converted some: \(started)")
    }

    /// `pg_ctl restart -m fast` in the middle of a batch: the agents wait for the server, reconnect and convert every
    /// file exactly once.
    @Test func aDatabaseRestartedDuringABatchLosesAndDoublesNothing() async throws {
        let names = ["north", "south"]
        let agents = try Agents(names, rules: Self.photos)
        defer { agents.stop() }
        let staging = try agents.shared.makeDirectory("staging")
        let files = (0..<300).map { String(format: "page%03d.png", $0) }
        for (index, file) in files.enumerated() {
            try Fixtures.makeImage(at: staging.appending(file), width: 96 + index % 5, height: 64)
        }
        for name in names { try await agents.start(name) }
        for file in files {
            try FileManager.default.moveItem(
                atPath: staging.appending(file).string,
                toPath: agents.inbox.appending(file).string
            )
        }
        try await waitUntil("60 outputs", timeout: 120) { agents.outputs(".jpg").count >= 60 ? true : nil }
        let before = agents.outputs(".jpg").count
        try agents.server.restart()
        try await waitUntil("300 sidecars", timeout: 400) { agents.sidecars >= files.count ? true : nil }
        try await waitUntil("every job recorded as completed", timeout: 120) {
            try agents.server.psql("SELECT COUNT(*) FROM job WHERE state = 'completed'") == "300" ? true : nil
        }
        let outputs = agents.outputs(".jpg")
        let started = try names.map { try agents.daemon($0).logLines(containing: "Job started", "page").count }
        let lost = try names.map { try agents.daemon($0).logLines(containing: "Store connection lost").count }
        print(
            "database restarted after \(before) of 300 outputs: \(outputs.count) outputs, \(Set(outputs).count) distinct, "
                + "rows \(try agents.server.psql("SELECT COUNT(*) FROM job")); jobs started per agent \(started); "
                + "'Store connection lost' per agent \(lost)"
        )
        #expect(try agents.server.serverLog().contains("database system is shut down"), "the server did restart")
        #expect(outputs.sorted() == files.map { $0.replacingOccurrences(of: ".png", with: ".jpg") }.sorted())
        #expect(try agents.server.psql("SELECT COUNT(*) FROM job") == "300")
        #expect(started.reduce(0, +) == 300, "no file converted twice: \(started)")
        #expect(agents.shared.files().filter { $0.contains(".chute-") }.isEmpty, "no temporary file is left")
    }

    /// The agent converting a long clip is killed: once its lease runs out, another agent takes the job over and
    /// finishes it; the killed agent, started again, does not convert it again.
    @Test func aKilledAgentsJobIsFinishedByAnotherAfterItsLease() async throws {
        let agents = try Agents(["east", "west"], rules: Self.clips, lease: "4s")
        defer { agents.stop() }
        let clip = agents.shared.appending("long.mov")
        try MediaFixtures.makeClip(
            at: clip,
            width: 640,
            height: 360,
            seconds: 20,
            codecArguments: MediaFixtures.h264AAC
        )
        for name in ["east", "west"] { try await agents.start(name) }
        try FileManager.default.moveItem(atPath: clip.string, toPath: agents.inbox.appending("long.mov").string)

        let holder = try await Self.agentStarting("long.mov", among: agents, ["east", "west"])
        let other = holder == "east" ? "west" : "east"
        try agents.daemon(holder).send(SIGKILL)
        _ = try await agents.daemon(holder).waitForExit(timeout: 30)
        let taken = try await agents.daemon(other).waitForLog("Job taken back", "agent=\(holder)", timeout: 60)
        try await waitUntil("the clip's output", timeout: 180) {
            agents.outputs(".mp4").count == 1 && agents.sidecars == 1 ? true : nil
        }
        let ranBy = try agents.server.psql("SELECT agent || ' ' || state FROM job")
        print("killed \(holder) while it converted; \(other): \(taken.first ?? ""); the store: \(ranBy)")
        #expect(ranBy == "\(other) completed")

        try await agents.start(holder)
        let restarted = try agents.daemon(holder)
        // Proof that the restarted agent has looked at the inbox: its own sentinel-free scan logs the file as done.
        try await restarted.waitForLog("Already handled before a restart", timeout: 60)
        #expect(restarted.logLines(containing: "Job started").isEmpty, "the killed agent converted nothing again")
        #expect(agents.outputs(".mp4") == ["long.mp4"])
        let duration = try MediaFixtures.entries("format=duration", of: agents.outbox.appending("long.mp4"))
        print("the output: \(duration.trimmingCharacters(in: .whitespacesAndNewlines)) s")
        #expect((Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 19.5)
    }

    /// An agent killed between its output's rename and its sidecar: once its lease runs out, another agent finds the
    /// output by its inode, writes the sidecar and completes the job; nothing is converted twice.
    @Test func aCommitCutByAKillIsFinishedByAnotherAgent() async throws {
        let agents = try Agents(["east", "west"], rules: Self.photos, lease: "4s")
        defer { agents.stop() }
        try await agents.start("east", environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        try Fixtures.makeImage(at: agents.shared.appending("cut.png"), width: 640, height: 480)
        try FileManager.default.moveItem(
            atPath: agents.shared.appending("cut.png").string,
            toPath: agents.inbox.appending("cut.png").string
        )
        _ = try await agents.daemon("east").waitForExit(timeout: 60)
        #expect(agents.outputs(".jpg") == ["cut.jpg"] && agents.sidecars == 0, "killed after the rename")
        #expect(try agents.server.psql("SELECT agent || ' ' || state FROM job") == "east committing")

        try await agents.start("west")
        let west = try agents.daemon("west")
        let taken = try await west.waitForLog("Commit of an agent whose lease ran out taken over", timeout: 60)
        let settled = try await west.waitForLog("Commits taken over settled", timeout: 30)
        try await waitUntil("the sidecar", timeout: 30) { agents.sidecars == 1 ? true : nil }
        print("west: \(taken.first ?? "")\nwest: \(settled.first ?? "")")
        #expect(settled.first?.contains("completed=1") == true)
        #expect(agents.outputs(".jpg") == ["cut.jpg"], "no second output")
        #expect(west.logLines(containing: "Job started").isEmpty, "nothing converted again")
        #expect(try agents.server.psql("SELECT agent || ' ' || state FROM job") == "west completed")
    }

    /// An agent paused (SIGSTOP) past its lease while it converts: the other agent takes the job over and completes
    /// it; once the paused one goes on (SIGCONT), its late result is refused, and the newer output stays as it was.
    @Test func aPausedAgentsLateResultIsRefusedByFencing() async throws {
        let agents = try Agents(["east", "west"], rules: Self.clips, lease: "4s")
        defer { agents.stop() }
        let clip = agents.shared.appending("paused.mov")
        try MediaFixtures.makeClip(at: clip, width: 640, height: 360, seconds: 8, codecArguments: MediaFixtures.h264AAC)
        for name in ["east", "west"] { try await agents.start(name) }
        try FileManager.default.moveItem(atPath: clip.string, toPath: agents.inbox.appending("paused.mov").string)

        let holder = try await Self.agentStarting("paused.mov", among: agents, ["east", "west"])
        let other = holder == "east" ? "west" : "east"
        try agents.daemon(holder).send(SIGSTOP)
        // Paused while it converted, the other agent converts the clip again; paused while it committed (its output
        // converted and synced), the other takes the commit over and completes it (found by its inode).
        let taker = try agents.daemon(other)
        let how = try await waitUntil("the other agent to complete the job", timeout: 180) { () -> String? in
            if !taker.logLines(containing: "Job completed", "paused").isEmpty { return "converted again" }
            if !taker.logLines(containing: "Commits taken over settled", "completed=1").isEmpty {
                return "its commit taken over"
            }
            return nil
        }
        print("\(holder) paused; \(other) completed the job: \(how)")
        let output = agents.outbox.appending("paused.mp4")
        let before = try Data(contentsOf: URL(fileURLWithPath: output.string))
        try agents.daemon(holder).send(SIGCONT)
        let refused = try await agents.daemon(holder).waitForLog("Result refused", timeout: 120)
        print("\(holder) paused past its lease, then went on: \(refused.first ?? "")")
        try await waitUntil("no temporary file", timeout: 30) {
            agents.shared.files().contains { $0.contains(".chute-") } ? nil : true
        }
        #expect(agents.outputs(".mp4") == ["paused.mp4"], "no second output")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output.string)) == before, "the newer output is intact")
        #expect(try agents.daemon(holder).logLines(containing: "Job completed").isEmpty)
        #expect(try agents.server.psql("SELECT agent || ' ' || state FROM job") == "\(other) completed")
    }

    /// The agent whose log says first that it started converting `file`.
    private static func agentStarting(_ file: String, among agents: Agents, _ names: [String]) async throws -> String {
        try await waitUntil("an agent starting \(file)", timeout: 60) {
            try names.first { !(try agents.daemon($0).logLines(containing: "Job started", file).isEmpty) }
        }
    }
}
