import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// A rule's `run:` hook after its jobs: the job's facts in the environment and its sidecar on standard input, its
/// output in the log, and a hook that hangs killed at its timeout without touching the job's outcome.
@Suite(.timeLimit(.minutes(3)))
struct HooksEndToEndTests {
    @Test func aHookGetsTheJobsFactsAndSidecarAndAHangingOneIsKilledLeavingTheJobCompleted() async throws {
        let records = try TemporaryDirectory(prefix: "hook-records")
        defer { records.remove() }
        // Written at test time: a program that records what it was given, and says so on its standard output.
        let script = records.appending("record.sh")
        try """
        #!/bin/sh
        env | grep '^CHUTE_' | sort > "\(records.path)/$CHUTE_JOB_ID.env"
        id -u > "\(records.path)/$CHUTE_JOB_ID.uid"
        cat > "\(records.path)/$CHUTE_JOB_ID.stdin"
        echo "recorded $CHUTE_STATUS for $CHUTE_RULE"
        """.write(toFile: script.string, atomically: true, encoding: .utf8)
        chmod(script.string, 0o755)
        // The hook runs as the rule's owner, nobody, when the daemon is root: the records are for anyone to write.
        chmod(records.path.string, 0o777)
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    owner: 65534
                    run:
                      command: [\(script)]
                      on: [completed, failed]
                  - name: slow
                    match: "*.bmp"
                    to: jpg
                    output: ./outbox
                    run: [/bin/sleep, "600"]
                    runTimeout: 1s
                """,
            settings: "  hookConcurrency: 1"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("a.png"), width: 64, height: 48)
        try Fixtures.makeImage(at: staging.appending("b.bmp"), width: 64, height: 48)
        try Fixtures.makeRandomFile(at: staging.appending("broken.png"), bytes: 4096)
        try harness.moveIn(["b.bmp", "a.png", "broken.png"], from: staging)
        let daemon = try #require(harness.daemon)

        let sidecars = try await harness.waitForSidecars(3)
        let completed = try #require(sidecars["a.jpg.chute.json"])
        let failed = try #require(sidecars["broken.jpg.chute.json"])
        #expect(completed.status == .completed && failed.status == .failed)
        #expect(sidecars["b.jpg.chute.json"]?.status == .completed)
        try await waitUntil("the hooks of a.png and broken.png, and the slow one killed", timeout: 30) {
            let recorded = records.files().filter { $0.hasSuffix(".stdin") }.count
            let killed = daemon.logLines(containing: "Hook killed at its timeout").count
            return recorded == 2 && killed == 1 ? true : nil
        }

        let outbox = harness.outbox
        let environment = try String(
            contentsOfFile: records.appending("\(completed.jobID).env").string,
            encoding: .utf8
        )
        print("the hook's environment after a.png:\n\(environment)")
        #expect(
            environment.split(separator: "\n").map(String.init) == [
                "CHUTE_JOB_ID=\(completed.jobID)",
                "CHUTE_OUTPUTS=[\"\(outbox.appending("a.jpg"))\"]",
                "CHUTE_RULE=photos",
                "CHUTE_SIDECAR=\(outbox.appending("a.jpg.chute.json"))",
                "CHUTE_SOURCE=\(harness.inbox.appending("a.png"))",
                "CHUTE_STATUS=completed",
            ]
        )
        let input = try Data(contentsOf: URL(fileURLWithPath: records.appending("\(completed.jobID).stdin").string))
        let sidecar = try Data(contentsOf: URL(fileURLWithPath: outbox.appending("a.jpg.chute.json").string))
        #expect(input == sidecar, "the sidecar on standard input, byte for byte")
        let user = try String(contentsOfFile: records.appending("\(completed.jobID).uid").string, encoding: .utf8)
        #expect(user == (getuid() == 0 ? "65534\n" : "\(getuid())\n"), "as the rule's owner")
        let afterFailure = try String(contentsOfFile: records.appending("\(failed.jobID).env").string, encoding: .utf8)
        #expect(afterFailure.contains("CHUTE_STATUS=failed\n") && afterFailure.contains("CHUTE_OUTPUTS=[]\n"))
        #expect(afterFailure.contains("CHUTE_SIDECAR=\(outbox.appending("broken.jpg.chute.json"))\n"))
        #expect(daemon.logLines(containing: "Hook output", "recorded completed for photos").count == 1)
        #expect(daemon.logLines(containing: "Hook output", "recorded failed for photos").count == 1)

        // The hanging hook was killed; its job stays completed, in its sidecar and in the history.
        let killed = daemon.logLines(containing: "Hook killed at its timeout")
        print(killed.joined(separator: "\n"))
        #expect(killed.first?.contains("rule.name=slow") == true)
        #expect(daemon.logLines(containing: "Hook failed", "rule.name=slow", "signal=9").count == 1)
        let history = try CommandLineTool.run([
            ChuteProcess.executable.string, "jobs", "--config", harness.configPath.string, "--json",
        ]).standardOutput
        let jobs = (try JSONSerialization.jsonObject(with: Data(history.utf8)) as? [String: Any])?["jobs"]
        let slow = (jobs as? [[String: Any]] ?? []).first { ($0["source"] as? String)?.hasSuffix("b.bmp") == true }
        #expect(slow?["state"] as? String == "completed", "\(String(describing: slow))")

        let metrics = try harness.metrics()
        let succeeded = metrics.value("chute_hook_runs_total", ["rule": "photos", "result": "succeeded"])
        let slowFailed = metrics.value("chute_hook_runs_total", ["rule": "slow", "result": "failed"])
        print("chute_hook_runs_total: photos succeeded \(succeeded ?? -1), slow failed \(slowFailed ?? -1)")
        #expect(succeeded == 2 && slowFailed == 1)
    }

    /// A `pre:` hook before each job: exit 1 refuses a file (its job cancelled, with the hook's message), a changed
    /// working copy is what gets converted, and an untouched one leaves the job as it was.
    @Test func aPreHookRefusesOneFileAndSwapsAnother() async throws {
        let scripts = try TemporaryDirectory(prefix: "pre-hook")
        defer { scripts.remove() }
        let script = scripts.appending("triage.sh")
        try """
        #!/bin/sh
        case "$CHUTE_SOURCE" in
          *refuse*) echo "not a receipt: ${CHUTE_SOURCE##*/}"; exit 1 ;;
          *swap*) \(Fixtures.convert) -size 40x30 xc:red "png:$CHUTE_WORKING_PATH" ;;
        esac
        echo "triaged $CHUTE_RULE $CHUTE_JOB_ID"
        """.write(toFile: script.string, atomically: true, encoding: .utf8)
        chmod(script.string, 0o755)
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: receipts
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    pre: [\(script)]
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        for name in ["keep.png", "swap.png", "refuse.png"] {
            try Fixtures.makeImage(at: staging.appending(name), width: 64, height: 48)
        }
        try harness.moveIn(["keep.png", "swap.png", "refuse.png"], from: staging)
        let daemon = try #require(harness.daemon)

        let sidecars = try await harness.waitForSidecars(3)
        let refused = try #require(sidecars["refuse.jpg.chute.json"])
        print("refused: \(refused.status) \(refused.error?.message ?? "")")
        #expect(refused.status == .cancelled)
        #expect(refused.error?.message == "refused by the rule's pre hook: not a receipt: refuse.png")
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("refuse.jpg").string))
        let swapped = try Fixtures.identify(harness.outbox.appending("swap.jpg"))
        let kept = try Fixtures.identify(harness.outbox.appending("keep.jpg"))
        print("swap.jpg \(swapped.width)x\(swapped.height), keep.jpg \(kept.width)x\(kept.height)")
        #expect(swapped.width == 40 && swapped.height == 30, "the hook's copy was converted")
        #expect(kept.width == 64 && kept.height == 48)
        #expect(sidecars["swap.jpg.chute.json"]?.warnings.contains { $0.contains("pre hook changed the file") } == true)
        #expect(sidecars["keep.jpg.chute.json"]?.warnings.isEmpty == true)
        #expect(daemon.logLines(containing: "Hook output", "triaged receipts").count == 2)
        #expect(harness.temporaryFiles().isEmpty, "no working copy is left")
        // The original is the user's: the hook changed only its copy.
        let original = try Fixtures.identify(harness.inbox.appending("swap.png"))
        #expect(original.width == 64 && original.height == 48)
    }
}
