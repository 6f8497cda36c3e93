import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The daemon killed with SIGKILL at several points of a batch, then restarted: every input ends with exactly one
/// output or one failure record, and nothing is left half done.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct CrashEndToEndTests {
    @Test func killsDuringABatchOf100FilesLeaveExactlyOneOutcomePerInput() async throws {
        // The 100 inputs are copies of one image, each to be converted: duplicates are not skipped here.
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    quality: 0.85
                    output: ./outbox
                    onDuplicate: convert
                """,
            settings: "  concurrency: {image: 2}"
        )
        defer { harness.stop() }
        let staging = try harness.directory.makeDirectory("staging")
        let names = (0..<100).map { String(format: "photo%03d.png", $0) }
        try Fixtures.makeImage(at: staging.appending("base.png"), width: 96, height: 64)
        for name in names {
            try FileManager.default.copyItem(
                atPath: staging.appending("base.png").string,
                toPath: staging.appending(name).string
            )
        }

        // 1. The daemon kills itself right after the 5th output is renamed into place, before its sidecar and
        //    journal row are written: the window a kill from outside seldom hits.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "5"])
        for name in names {
            try FileManager.default.moveItem(
                atPath: staging.appending(name).string,
                toPath: harness.inbox.appending(name).string
            )
        }
        let first = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(first.signalled, "the crash point killed the daemon")

        // 2 and 3. Killed from outside in the middle of the batch, at two later points.
        for target in [30, 60] {
            try await harness.start()
            let daemon = try #require(harness.daemon)
            if target == 30 {
                // The output renamed before the kill (and any other job between its record and its rename) is found
                // by its inode and completed with its sidecar.
                let opened = try #require(daemon.logLines(containing: "Journal opened").first)
                let completed = opened.firstMatch(of: /completed=(\d+)/).flatMap { Int($0.1) } ?? 0
                #expect(completed >= 1, "\(opened)")
            }
            try await waitUntil("\(target) outputs", timeout: 120) {
                Self.outputs(of: harness).count >= target ? true : nil
            }
            daemon.send(SIGKILL)
            _ = try await daemon.waitForExit(timeout: 30)
        }

        // 4. A last run finishes the batch.
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(100, timeout: 180)

        let outputs = Self.outputs(of: harness)
        let failures = sidecars.values.filter { $0.status == .failed }.count
        let stems = Set(outputs.map { String($0.dropLast(".jpg".count)) })
        // A second output for one input would get a free name such as photo004-1.jpg.
        let duplicates = outputs.count - stems.intersection(names.map { String($0.dropLast(".png".count)) }).count
        let temporaries = harness.temporaryFiles()
        print(
            "crash test: inputs \(names.count), outputs \(outputs.count), failures \(failures), "
                + "duplicates \(duplicates), leftover temporary files \(temporaries.count)"
        )
        #expect(outputs.count == 100)
        #expect(failures == 0)
        #expect(duplicates == 0, "\(outputs.sorted())")
        #expect(temporaries.isEmpty, "\(temporaries)")
        #expect(sidecars.count == 100 && sidecars.values.allSatisfy { $0.status == .completed })
        for name in names {
            #expect(FileManager.default.fileExists(atPath: harness.inbox.appending(name).string), "source kept")
        }
    }

    /// A job is in the journal from the moment it is accepted: a SIGKILL while jobs wait in the queue loses none of
    /// them. The restart counts them (`unfinished.queued`), and each file still gets exactly one output.
    @Test func aKillWhileJobsAreQueuedLosesNone() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    onDuplicate: convert
                """,
            settings: "  cpuBudget: 1\n  concurrency: {image: 1}"
        )
        defer { harness.stop() }
        let staging = try harness.directory.makeDirectory("staging")
        let names = (0..<12).map { String(format: "scan%02d.png", $0) }
        try Fixtures.makeImage(at: staging.appending("base.png"), width: 1200, height: 900)
        for name in names {
            try FileManager.default.copyItem(
                atPath: staging.appending("base.png").string,
                toPath: staging.appending(name).string
            )
        }
        try await harness.start()
        try harness.moveIn(names, from: staging)
        let journal = harness.directory.appending(".chute/journal.sqlite")
        let queued = try await waitUntil("jobs queued in the journal", timeout: 60) { () -> Int? in
            let count = try? CommandLineTool.run([
                "sqlite3", journal.string, "SELECT COUNT(*) FROM job WHERE state = 'queued'",
            ]).standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            return count.flatMap { Int($0) }.flatMap { $0 >= 4 ? $0 : nil }
        }
        let daemon = try #require(harness.daemon)
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)

        try await harness.start()
        let restarted = try #require(harness.daemon)
        let opened = try #require(restarted.logLines(containing: "Journal opened").first)
        let recovered = opened.firstMatch(of: /unfinished\.queued=(\d+)/).flatMap { Int($0.1) } ?? 0
        let sidecars = try await harness.waitForSidecars(names.count, timeout: 240)
        let outputs = Self.outputs(of: harness)
        print(
            "queued kill: \(queued) queued in the journal at the kill, \(recovered) recovered as queued, "
                + "\(outputs.count) outputs for \(names.count) inputs"
        )
        #expect(recovered >= 1, "\(opened)")
        #expect(outputs.sorted() == names.map { $0.replacingOccurrences(of: ".png", with: ".jpg") }.sorted())
        #expect(sidecars.values.allSatisfy { $0.status == .completed })
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    /// The JPEG outputs in the outbox, the sentinels of ``DaemonHarness/waitForSidecars(_:timeout:)`` left out.
    private static func outputs(of harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter { $0.hasSuffix(".jpg") && !$0.contains("zz-sentinel") }
    }
}
