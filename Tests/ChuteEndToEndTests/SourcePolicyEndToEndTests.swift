import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// What happens to sources on the real daemon: moved to a done folder or deleted only after a verified output,
/// quarantined with a reason file after a failure of their own, released by marker files.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SourcePolicyEndToEndTests {
    @Test func sourcesMoveToTheDoneFolderKeepingTheirPathAndNeverReplacing() async throws {
        // The done folder is inside the watched folder: what is moved there must not be taken again.
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    source: move
                    doneFolder: ./inbox/done
                """
        )
        defer { harness.stop() }
        let done = try harness.directory.makeDirectory("inbox/done")
        try Data("an older file".utf8).write(to: URL(fileURLWithPath: done.appending("b.png").string))
        // What a copy across file systems leaves when the daemon is killed in the middle of it.
        try Data("half a copy".utf8).write(to: URL(fileURLWithPath: done.appending(".chute-old.moving").string))
        try await harness.start()
        #expect(!FileManager.default.fileExists(atPath: done.appending(".chute-old.moving").string))
        let staging = try harness.directory.makeDirectory("staging/sub")
        try Fixtures.makeImage(at: staging.appending("a.png"), width: 64, height: 48)
        try Fixtures.makeImage(at: staging.removingLastComponent().appending("b.png"), width: 64, height: 48)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: staging.appending("a.png").string))
        try FileManager.default.moveItem(atPath: staging.string, toPath: harness.inbox.appending("sub").string)
        try FileManager.default.moveItem(
            atPath: staging.removingLastComponent().appending("b.png").string,
            toPath: harness.inbox.appending("b.png").string
        )
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["sub/a.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["b.jpg.chute.json"]?.status == .completed)
        try await waitUntil("the sources to be moved") {
            [done.appending("b-1.png"), done.appending("sub/a.png")].allSatisfy {
                FileManager.default.fileExists(atPath: $0.string)
            } ? true : nil
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: done.appending("sub/a.png").string)) == bytes)
        #expect(try String(contentsOfFile: done.appending("b.png").string, encoding: .utf8) == "an older file")
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("sub/a.png").string))
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("b.png").string))
        // Moved files were never taken again (the sentinels' sidecars prove the queue drained).
        #expect(harness.daemon?.logLines(containing: "Job queued", "done/").isEmpty == true)
        #expect(harness.sidecars().keys.filter { !$0.contains("zz-sentinel-") }.count == 2)
    }

    @Test func deleteWaitsForASuccessAndFailuresGoToQuarantineWithAReason() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    source: delete
                    quarantine: ./quarantine
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("good.png"), width: 64, height: 48)
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        let noise = try Data(contentsOf: URL(fileURLWithPath: staging.appending("noise.png").string))
        try harness.moveIn(["good.png", "noise.png"], from: staging)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["good.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["noise.jpg.chute.json"]?.error?.code == "unsupportedInput")
        let quarantined = harness.directory.appending("quarantine/noise.png")
        try await waitUntil("the failed source in quarantine") {
            FileManager.default.fileExists(atPath: quarantined.string + ".reason.txt") ? true : nil
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: quarantined.string)) == noise)
        let reason = try String(contentsOfFile: quarantined.string + ".reason.txt", encoding: .utf8)
        #expect(reason.contains("error: unsupportedInput"))
        #expect(reason.contains("rule: to-jpg"))
        #expect(reason.contains("sidecar: \(harness.outbox.appending("noise.jpg.chute.json"))"))
        // The converted source is gone, its output stays; the sentinels were deleted too.
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("good.png").string))
        #expect(try Fixtures.identify(harness.outbox.appending("good.jpg")).width == 64)
        #expect(harness.directory.files(below: "inbox").isEmpty)
    }

    @Test func aKillBetweenTheOutputAndTheMoveIsSettledAtRestart() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    source: move
                    doneFolder: ./done
                """
        )
        defer { harness.stop() }
        // The daemon kills itself right after the first output's rename, before its sidecar, journal row and move.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("photo.png"), width: 64, height: 48)
        try harness.moveIn(["photo.png"], from: staging)
        let exit = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(exit.signalled)
        #expect(FileManager.default.fileExists(atPath: harness.inbox.appending("photo.png").string))
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["photo.jpg.chute.json"]?.status == .completed)
        try await waitUntil("the source in the done folder") {
            FileManager.default.fileExists(atPath: harness.directory.appending("done/photo.png").string) ? true : nil
        }
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("photo.png").string))
        let outputs = harness.directory.files(below: "outbox").filter { $0.hasSuffix(".jpg") && !$0.hasPrefix("zz-") }
        #expect(outputs == ["photo.jpg"])
    }

    @Test func aKillBetweenAFailureAndItsQuarantineIsSettledAtRestart() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    quarantine: ./quarantine
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        // The daemon kills itself right after the failed job is recorded, before its source is quarantined.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_FAILURE": "1"])
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        try harness.moveIn(["noise.png"], from: staging)
        let exit = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(exit.signalled)
        #expect(FileManager.default.fileExists(atPath: harness.inbox.appending("noise.png").string))
        try await harness.start()
        let quarantined = harness.directory.appending("quarantine/noise.png")
        try await waitUntil("the failed source in quarantine") {
            FileManager.default.fileExists(atPath: quarantined.string + ".reason.txt") ? true : nil
        }
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("noise.png").string))
        let reason = try String(contentsOfFile: quarantined.string + ".reason.txt", encoding: .utf8)
        #expect(reason.contains("error: unsupportedInput"))
        // Not converted a second time: one failed sidecar, and no job at the restart.
        #expect(harness.sidecars()["noise.jpg.chute.json"]?.error?.code == "unsupportedInput")
        #expect(harness.daemon?.logLines(containing: "Job queued", "noise.png").isEmpty == true)
    }

    @Test func aFileWaitsForItsDoneMarker() async throws {
        let harness = try DaemonHarness(watchOptions: "    doneSuffix: .done")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Fixtures.makeImage(at: harness.inbox.appending("first.png"), width: 64, height: 48)
        try await daemon.waitForLog("Waiting for a marker", "first.png")
        // A later file with its marker goes through while the first still waits.
        try Fixtures.makeImage(at: harness.inbox.appending("second.png"), width: 64, height: 48)
        try Data().write(to: URL(fileURLWithPath: harness.inbox.appending("second.png.done").string))
        try await waitUntil("the second file's sidecar") {
            harness.sidecars()["second.jpg.chute.json"] != nil ? true : nil
        }
        #expect(harness.sidecars()["first.jpg.chute.json"] == nil)
        try Data().write(to: URL(fileURLWithPath: harness.inbox.appending("first.png.done").string))
        try await waitUntil("the first file's sidecar") {
            harness.sidecars()["first.jpg.chute.json"] != nil ? true : nil
        }
        #expect(harness.sidecars().values.allSatisfy { $0.status == .completed })
        // Markers are never inputs.
        #expect(harness.sidecars().count == 2)
        #expect(daemon.logLines(containing: "Job queued", ".done").isEmpty)
    }

    @Test func aFileWaitsWhileItsOwnOrItsFoldersLockExists() async throws {
        let harness = try DaemonHarness(watchOptions: "    lockSuffix: .lock")
        defer { harness.stop() }
        let locked = try harness.directory.makeDirectory("inbox/locked")
        try Data().write(to: URL(fileURLWithPath: locked.appending(".lock").string))
        try Data().write(to: URL(fileURLWithPath: harness.inbox.appending("own.png.lock").string))
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Fixtures.makeImage(at: locked.appending("a.png"), width: 64, height: 48)
        try Fixtures.makeImage(at: harness.inbox.appending("own.png"), width: 64, height: 48)
        try await daemon.waitForLog("Waiting for a marker", count: 2)
        // Files without a lock go through meanwhile.
        let free = try await harness.waitForSidecars(0)
        #expect(free.isEmpty)
        #expect(unlink(locked.appending(".lock").string) == 0)
        try await waitUntil("the folder's file once its lock is gone") {
            harness.sidecars()["locked/a.jpg.chute.json"] != nil ? true : nil
        }
        #expect(harness.sidecars()["own.jpg.chute.json"] == nil)
        #expect(unlink(harness.inbox.appending("own.png.lock").string) == 0)
        try await waitUntil("the file once its own lock is gone") {
            harness.sidecars()["own.jpg.chute.json"] != nil ? true : nil
        }
    }
}

/// A source rewritten while it is converted is busy, not failed: the output is discarded and the new version is
/// converted after the back-off.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct BusySourceEndToEndTests {
    @Test func aSourceChangedDuringItsConversionIsTriedAgainLater() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: to-heic
                    match: "*.png"
                    to: heic
                    output: ./outbox
                """,
            settings: "  retryDelay: 1s\n  concurrency: {image: 1}"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("big.png"), width: 2000, height: 1500)
        try harness.moveIn(["big.png"], from: staging)
        try await daemon.waitForLog("Job started", "big.png")
        // A new modification time is a new version of the file, as a writer's last touch would make it.
        try CommandLineTool.run(["touch", "-d", "2001-02-03 04:05:06", harness.inbox.appending("big.png").string])
        try await daemon.waitForLog("Job postponed", "sourceBusy")
        let sidecars = try await harness.waitForSidecars(1, timeout: 150)
        let sidecar = try #require(sidecars["big.heic.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.source.mtime.hasPrefix("2001-02-03"))
        #expect(daemon.logLines(containing: "Job failed").isEmpty)
        #expect(harness.temporaryFiles().isEmpty)
    }
}
