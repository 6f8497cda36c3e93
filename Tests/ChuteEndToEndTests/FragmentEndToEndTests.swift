import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Writers that leave a file alone for longer than the quiet period before they are done with it, on the real daemon
/// with `quarantine` and `source: move`: the file is never moved, quarantined or split while it may still grow, and
/// yields exactly one whole output.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct FragmentEndToEndTests {
    @Test func aTIFFAppendedInClosedChunksIsNeverSplitMovedOrQuarantinedEarly() async throws {
        // Where TIFF has no structural check, every pause of the writer ends a quiet period and a part is converted
        // (and fails); where it has one, the parts are held back as not ready. Either way nothing may be split.
        let harness = try Self.harness(
            matching: "*.tif",
            settings: "  retryDelay: 1s\n  incompleteTimeout: 10s"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("scan.tif"), width: 1200, height: 900)
        let data = try Data(contentsOf: URL(fileURLWithPath: staging.appending("scan.tif").string))
        let target = harness.inbox.appending("scan.tif")

        // Four `dd` runs, each opening the file to append, writing one chunk and closing it, as a script that uploads
        // in pieces would; between them the writer pauses for more than eight quiet periods. The pauses are the
        // writer's behaviour under test, not a way to wait for the daemon.
        let chunk = data.count / 4 + 1
        for index in 0..<4 {
            try CommandLineTool.run([
                "dd", "if=\(staging.appending("scan.tif"))", "of=\(target)", "bs=\(chunk)", "skip=\(index)", "count=1",
                "oflag=append", "conv=notrunc", "status=none",
            ])
            if index < 3 { try await Task.sleep(for: .milliseconds(2500)) }
        }

        try await daemon.waitForLog("Source moved to the done folder", "scan.tif", timeout: 90)
        // Every job that failed on a part armed a quarantine; each must have found the file changed and let it be.
        let failed = daemon.logLines(containing: "Job failed", "scan.tif").count
        try await daemon.waitForLog("Source changed or gone since its job; left alone", "scan.tif", count: failed)
        try await harness.waitForSidecars(1)
        let outputs = harness.directory.files(below: "outbox").filter { !$0.contains("zz-sentinel-") }
        #expect(outputs.sorted() == ["scan.jpg", "scan.jpg.chute.json"])
        let sidecar = try #require(harness.sidecars()["scan.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.source.size == Int64(data.count))
        let output = try Fixtures.identify(harness.outbox.appending("scan.jpg"))
        #expect(output.width == 1200 && output.height == 900)
        // The whole file, moved once; no fragment anywhere.
        #expect(harness.directory.files(below: "done") == ["scan.tif"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: harness.directory.appending("done/scan.tif").string)) == data)
        #expect(harness.directory.files(below: "quarantine").isEmpty)
        #expect(harness.directory.files(below: "inbox").filter { $0.contains("scan") }.isEmpty)
        #expect(daemon.logLines(containing: "Source moved to the done folder", "scan.tif").count == 1)
        #expect(daemon.logLines(containing: "Source quarantined").isEmpty)
        print(
            "TIFF in closed chunks: \(daemon.logLines(containing: "Job queued", "scan.tif").count) jobs, "
                + "\(failed) failed on a part, "
                + "\(daemon.logLines(containing: "Job postponed", "scan.tif").count) postponed"
        )
    }

    @Test func aFailureOfASourceChangedDuringItsJobIsBusyNotFailedAndNotQuarantined() async throws {
        // A 1 s job timeout that the conversion of a large PNG to HEIC always exceeds: a failure of the file's own.
        let harness = try DaemonHarness(
            rules: """
                  - name: slow
                    match: "big.png"
                    to: heic
                    output: ./outbox
                    jobTimeout: 1s
                    quarantine: ./quarantine
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                """,
            settings: "  retryDelay: 1s\n  concurrency: {image: 1}"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("big.png"), width: 4000, height: 3000)
        try harness.moveIn(["big.png"], from: staging)
        try await daemon.waitForLog("Job started", "big.png")
        // A new version while the job runs: its timeout is not the file's fault, and the source must stay.
        try CommandLineTool.run(["touch", "-d", "2001-02-03 04:05:06", harness.inbox.appending("big.png").string])
        // The new version left alone times out too, and that failure is its own: failed once, then quarantined.
        try await daemon.waitForLog("Source quarantined", "big.png")
        #expect(daemon.logLines(containing: "Job failed", "big.png").count == 1)
        #expect(!daemon.logLines(containing: "Job postponed", "big.png", "sourceBusy").isEmpty)
        #expect(!daemon.logLines(containing: "Job failed", "big.png", "timedOut").isEmpty)
        #expect(harness.directory.files(below: "quarantine").sorted() == ["big.png", "big.png.reason.txt"])
        let attributes = try FileManager.default.attributesOfItem(
            atPath: harness.directory.appending("quarantine/big.png").string
        )
        let modified = try #require(attributes[.modificationDate] as? Date)
        #expect(Calendar(identifier: .gregorian).component(.year, from: modified) == 2001)
    }

    /// A file that a process still holds open for writing is taken once `incompleteTimeout` is over, but its source
    /// is moved only after the writer has closed it: an SMB client that keeps its handle may still write.
    @Test func aSourceStillOpenForWritingIsNotMovedUntilItIsClosed() async throws {
        let harness = try Self.harness(matching: "held.png", settings: "  incompleteTimeout: 1s")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("held.png"))
        try harness.moveIn(["held.png"], from: staging)
        let writer = try FileDescriptor.open(harness.inbox.appending("held.png"), .writeOnly, options: .append)
        var writerOpen = true
        defer { if writerOpen { try? writer.close() } }

        try await daemon.waitForLog("Job completed", "held.png")
        try await daemon.waitForLog("Source open for writing; moving, deleting or quarantining it waits", "held.png")
        #expect(FileManager.default.fileExists(atPath: harness.inbox.appending("held.png").string))
        #expect(harness.directory.files(below: "done").isEmpty)

        try writer.close()
        writerOpen = false
        try await daemon.waitForLog("Source moved to the done folder", "held.png")
        #expect(harness.directory.files(below: "done") == ["held.png"])
    }

    @Test func anEmptyFileIsWaitedForUntilItIsFilled() async throws {
        let harness = try Self.harness(matching: "upload.png")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("upload.png"), width: 640, height: 480)
        let data = try Data(contentsOf: URL(fileURLWithPath: staging.appending("upload.png").string))
        let target = harness.inbox.appending("upload.png")

        // An SMB or FTP client creates the file at 0 bytes, then fills it once it has the data.
        guard FileManager.default.createFile(atPath: target.string, contents: nil) else {
            throw CocoaError(.fileWriteUnknown)
        }
        // Two quiet periods that ended on the empty file: the first is said at the info level, with how long the file
        // may wait, the next at the debug level.
        try await daemon.waitForLog("Waiting until the file is ready", "upload.png", "empty", count: 2, timeout: 30)
        let waits = daemon.logLines(containing: "Waiting until the file is ready", "upload.png")
        #expect(waits.prefix(2).map { $0.contains("level=info") } == [true, false])
        #expect(waits.first?.contains("incompleteTimeout=10m") == true)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: target.string))
        try handle.write(contentsOf: data)
        try handle.close()

        try await daemon.waitForLog("Source moved to the done folder", "upload.png")
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars["upload.jpg.chute.json"]?.status == .completed)
        #expect(sidecars["upload.jpg.chute.json"]?.source.size == Int64(data.count))
        #expect(try Fixtures.identify(harness.outbox.appending("upload.jpg")).width == 640)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: harness.directory.appending("done/upload.png").string)) == data
        )
        #expect(harness.directory.files(below: "quarantine").isEmpty)
        #expect(daemon.logLines(containing: "Job queued", "upload.png").count == 1)
        #expect(daemon.logLines(containing: "Job failed").isEmpty)
    }

    @Test func aFileThatStaysEmptyFailsClearlyAndIsQuarantinedOnlyOnceQuiet() async throws {
        let harness = try Self.harness(matching: "nothing.png", settings: "  incompleteTimeout: 1s")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        guard FileManager.default.createFile(atPath: harness.inbox.appending("nothing.png").string, contents: nil)
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        let quarantined = harness.directory.appending("quarantine/nothing.png")
        try await waitUntil("the empty file in quarantine") {
            FileManager.default.fileExists(atPath: quarantined.string + ".reason.txt") ? true : nil
        }
        #expect(!daemon.logLines(containing: "Waiting until the file is ready", "nothing.png", "empty").isEmpty)
        let sidecar = try #require(harness.sidecars()["nothing.jpg.chute.json"])
        #expect(sidecar.error?.code == "corruptInput")
        #expect(sidecar.error?.message.contains("empty") == true)
        let reason = try String(contentsOfFile: quarantined.string + ".reason.txt", encoding: .utf8)
        #expect(reason.contains("error: corruptInput"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: quarantined.string)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: harness.inbox.appending("nothing.png").string))
    }

    @Test func aQuarantinedFileMovedBackIsRetriedWhileRunningAndAfterARestart() async throws {
        let harness = try Self.harness(matching: "noise.png", settings: "  incompleteTimeout: 1s")
        defer { harness.stop() }
        try await harness.start()
        var daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeRandomFile(at: staging.appending("noise.png"), bytes: 4096)
        try harness.moveIn(["noise.png"], from: staging)
        let quarantined = harness.directory.appending("quarantine/noise.png")
        let inboxFile = harness.inbox.appending("noise.png")
        try await daemon.waitForLog("Source quarantined", "noise.png")
        let firstJob = try #require(harness.sidecars()["noise.jpg.chute.json"]?.jobID)
        let reason = try String(contentsOfFile: quarantined.string + ".reason.txt", encoding: .utf8)
        #expect(reason.contains("To try again, move the file back into the watched folder."))

        // As the reason file says: the same bytes moved back are tried again, while the daemon runs.
        try FileManager.default.moveItem(atPath: quarantined.string, toPath: inboxFile.string)
        try await daemon.waitForLog("Source quarantined", "noise.png", count: 2)
        #expect(daemon.logLines(containing: "Job queued", "noise.png").count == 2)
        let secondJob = try #require(harness.sidecars()["noise.jpg.chute.json"]?.jobID)
        #expect(secondJob != firstJob)

        // And after a restart: moved back while the daemon is stopped, it is a new arrival, not a known failure.
        daemon.send(SIGTERM)
        _ = try await daemon.waitForExit()
        try FileManager.default.moveItem(atPath: quarantined.string, toPath: inboxFile.string)
        try await harness.start()
        daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Source quarantined", "noise.png")
        #expect(daemon.logLines(containing: "Job queued", "noise.png").count == 1)
        #expect(daemon.logLines(containing: "Already handled before a restart", "noise.png").isEmpty)
        let thirdJob = try #require(harness.sidecars()["noise.jpg.chute.json"]?.jobID)
        #expect(thirdJob != secondJob)
        #expect(harness.sidecars()["noise.jpg.chute.json"]?.error?.code == "unsupportedInput")
        #expect(FileManager.default.fileExists(atPath: quarantined.string))
        #expect(!FileManager.default.fileExists(atPath: inboxFile.string))
    }

    /// A harness whose rule converts `pattern` to JPEG, moves converted sources to `./done` and quarantines failed
    /// ones in `./quarantine`; plus the rule for the sentinel PNGs of ``DaemonHarness/waitForSidecars(_:timeout:)``.
    private static func harness(matching pattern: String, settings: String = "") throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: files
                    match: "\(pattern)"
                    to: jpg
                    output: ./outbox
                    source: move
                    doneFolder: ./done
                    quarantine: ./quarantine
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                """,
            settings: settings
        )
    }
}
