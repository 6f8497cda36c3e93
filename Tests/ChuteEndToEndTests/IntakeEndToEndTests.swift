import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon on temporary folders: every way a file can land is processed exactly once, and what must be
/// ignored is ignored.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct IntakeEndToEndTests {
    @Test func heicCopiedInBecomesJPEGWithQuality85AndSidecar() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("IMG_0042.heic"), width: 640, height: 480)
        // A copy writes the file in place (create, write, close), unlike a rename.
        try FileManager.default.copyItem(
            atPath: staging.appending("IMG_0042.heic").string,
            toPath: harness.inbox.appending("IMG_0042.heic").string
        )
        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["IMG_0042.jpg.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.rule == "to-jpg")
        #expect(sidecar.source.sniffedType == "heif")
        #expect(sidecar.source.sha256?.count == 64)
        #expect(sidecar.libraries.keys.contains("ImageMagick"))
        #expect(sidecar.output?.path == harness.outbox.appending("IMG_0042.jpg").string)
        let info = try Fixtures.identify(harness.outbox.appending("IMG_0042.jpg"))
        #expect(info.format == "JPEG")
        #expect(info.quality == 85)
        #expect(info.width == 640 && info.height == 480)
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func fileMovedInIsProcessedOnce() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("moved.png"))
        try FileManager.default.moveItem(
            atPath: staging.appending("moved.png").string,
            toPath: harness.inbox.appending("moved.png").string
        )
        let sidecars = try await harness.waitForSidecars(1)
        #expect(Array(sidecars.keys) == ["moved.jpg.chute.json"])
        #expect(
            harness.directory.files(below: "outbox").filter { !$0.contains("zz-sentinel") } == [
                "moved.jpg", "moved.jpg.chute.json",
            ]
        )
    }

    @Test func wholeDirectoryMovedInKeepsItsStructure() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let album = try harness.directory.makeDirectory("staging/album")
        try harness.directory.makeDirectory("staging/album/day1/morning")
        for name in ["a.png", "day1/b.png", "day1/morning/c.png", "day1/morning/d.jpg"] {
            try Fixtures.makeImage(at: album.appending(name), width: 64, height: 48)
        }
        try FileManager.default.moveItem(atPath: album.string, toPath: harness.inbox.appending("album").string)
        let sidecars = try await harness.waitForSidecars(4)
        #expect(
            sidecars.keys.sorted() == [
                "album/a.jpg.chute.json", "album/day1/b.jpg.chute.json", "album/day1/morning/c.jpg.chute.json",
                "album/day1/morning/d.jpg.chute.json",
            ]
        )
        #expect(sidecars.values.allSatisfy { $0.status == .completed })
    }

    @Test func filesPresentAtStartUpAreProcessed() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try harness.directory.makeDirectory("inbox/old")
        try Fixtures.makeImage(at: harness.inbox.appending("first.png"))
        try Fixtures.makeImage(at: harness.inbox.appending("old/second.png"))
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars.keys.sorted() == ["first.jpg.chute.json", "old/second.jpg.chute.json"])
    }

    @Test func restartDoesNotRedoFinishedWork() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try Fixtures.makeImage(at: harness.inbox.appending("once.png"))
        try await harness.start()
        try await harness.waitForSidecars(1)
        harness.daemon?.send(SIGTERM)
        _ = try await harness.daemon?.waitForExit()
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(1)
        #expect(sidecars.keys.sorted() == ["once.jpg.chute.json"])
        #expect(!harness.directory.files(below: "outbox").contains("once-1.jpg"))
    }

    @Test func rsyncTemporaryThenRenameYieldsOneJob() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("synced.png"), width: 800, height: 600)
        // rsync writes `.synced.png.XXXXXX` and renames it into place.
        try CommandLineTool.run(["rsync", staging.appending("synced.png").string, harness.inbox.string + "/"])
        // The same by hand, with a browser-style partial name.
        try Fixtures.makeImage(at: staging.appending("download.png"))
        try FileManager.default.moveItem(
            atPath: staging.appending("download.png").string,
            toPath: harness.inbox.appending("download.png.part").string
        )
        try FileManager.default.moveItem(
            atPath: harness.inbox.appending("download.png.part").string,
            toPath: harness.inbox.appending("download.png").string
        )
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars.keys.sorted() == ["download.jpg.chute.json", "synced.jpg.chute.json"])
        let jobLines = harness.daemon?.logLines(containing: "Job queued") ?? []
        #expect(jobLines.count == 3)  // two files and the sentinel
    }

    @Test func subFolderCreatedAndFilledAtOnce() async throws {
        // The 20 files are copies of one image, each to be converted: duplicates are not skipped here.
        let harness = try DaemonHarness(
            rules: """
                  - name: to-jpg
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                    onDuplicate: convert
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Fixtures.makeImage(at: staging.appending("seed.png"), width: 48, height: 32)
        let seed = try Data(contentsOf: URL(fileURLWithPath: staging.appending("seed.png").string))
        // mkdir and write immediately: the files race the new folder's watch, so the folder must be scanned.
        let burst = harness.inbox.appending("burst")
        try FileManager.default.createDirectory(atPath: burst.string, withIntermediateDirectories: false)
        for index in 0..<20 {
            try seed.write(to: URL(fileURLWithPath: burst.appending("f\(index).png").string))
        }
        let sidecars = try await harness.waitForSidecars(20)
        #expect(sidecars.count == 20)
        #expect(Set(sidecars.keys) == Set((0..<20).map { "burst/f\($0).jpg.chute.json" }))
    }

    @Test func ignoredNamesAreNeverProcessed() async throws {
        // A rule that takes every name, so only the ignore lists can keep these files out.
        let harness = try DaemonHarness(
            rules: """
                  - name: everything
                    match: "*"
                    to: jpg
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try harness.directory.makeDirectory("inbox/@eaDir")
        try harness.directory.makeDirectory("inbox/#recycle")
        for name in [
            "x.png.part", "._x.png", ".DS_Store", "Thumbs.db", "@eaDir/thumb.png", "#recycle/old.png", "y.png.tmp",
            ".y.png.AbC123", "~$report.png", "z.png.crdownload",
        ] {
            try Fixtures.makeImage(at: harness.directory.appending("ignored.png"), width: 16, height: 16)
            try FileManager.default.moveItem(
                atPath: harness.directory.appending("ignored.png").string,
                toPath: harness.inbox.appending(name).string
            )
        }
        try Fixtures.makeImage(at: harness.inbox.appending("real.png"))
        let sidecars = try await harness.waitForSidecars(1)
        #expect(Array(sidecars.keys) == ["real.jpg.chute.json"])
        #expect(harness.daemon?.logLines(containing: "Job queued").count == 2)  // real.png and the sentinel
    }

    /// A file no rule takes is said so in the log at the info level, once for each version of it: closed again
    /// unchanged, it is looked at again quietly; written again, it is said so again.
    @Test func aFileNoRuleTakesIsLoggedOncePerVersion() async throws {
        let harness = try DaemonHarness()
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let notes = harness.inbox.appending("notes.txt")
        let said = "level=info msg=\"No rule matches; the file is left alone (chute explain says why)\""
        try "first\n".write(toFile: notes.string, atomically: false, encoding: .utf8)
        _ = try await daemon.waitForLog(said, "notes.txt")

        try FileHandle(forWritingAtPath: notes.string).map { try $0.close() }
        _ = try await daemon.waitForLog("level=debug msg=\"No rule matches, as before\"", "notes.txt")
        #expect(daemon.logLines(containing: said, "notes.txt").count == 1)

        try "second version\n".write(toFile: notes.string, atomically: false, encoding: .utf8)
        _ = try await daemon.waitForLog(said, "notes.txt", count: 2)
        #expect(daemon.logLines(containing: "Job queued", "notes.txt").isEmpty)
    }

    @Test func outputFolderInsideTheWatchedFolderCausesNoLoop() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: any-to-jpg
                    match: ["*.png", "*.jpg"]
                    to: jpg
                    output: ./inbox/converted
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Fixtures.makeImage(at: harness.inbox.appending("loop.png"))
        try Fixtures.makeImage(at: harness.inbox.appending("photo.jpg"))
        try await waitUntil("two outputs in inbox/converted") {
            harness.directory.files(below: "inbox/converted").filter { $0.hasSuffix(".chute.json") }.count >= 2
                ? true : nil
        }
        // Prove that the outputs (JPEGs that match the rule) are not taken as inputs: a sentinel goes through after.
        try Fixtures.makeImage(at: harness.inbox.appending("sentinel.png"), width: 16, height: 16)
        try await waitUntil("the sentinel's output") {
            harness.directory.files(below: "inbox/converted").contains("sentinel.jpg.chute.json") ? true : nil
        }
        #expect(
            harness.directory.files(below: "inbox/converted") == [
                "loop.jpg", "loop.jpg.chute.json", "photo.jpg", "photo.jpg.chute.json", "sentinel.jpg",
                "sentinel.jpg.chute.json",
            ]
        )
        #expect(harness.daemon?.logLines(containing: "Job queued").count == 3)
    }

    /// A file that its writer closed, that no process holds open for writing and whose structure shows it whole is
    /// taken without a quiet period; an MP3 without a Xing header (no structural end to check) still waits for one.
    @Test func aWholeFileClosedByItsWriterIsTakenWithoutAQuietPeriod() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: photos
                    match: "*.png"
                    to: jpg
                    output: ./outbox
                  - name: sound
                    match: "*.mp3"
                    to: wav
                    output: ./outbox
                """,
            quietPeriod: "15s"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a",
            "libmp3lame", "-write_xing", "0", staging.appending("plain.mp3").string,
        ])
        try FileManager.default.copyItem(
            atPath: staging.appending("plain.mp3").string,
            toPath: harness.inbox.appending("plain.mp3").string
        )
        try Fixtures.makeImage(at: harness.inbox.appending("photo.png"), width: 64, height: 48)
        let daemon = try #require(harness.daemon)
        try await daemon.waitForLog("Job completed", "photo.jpg", timeout: 60)
        // The MP3, dropped first, is still in its quiet period: nothing but the photo was taken.
        #expect(daemon.logLines(containing: "Job queued").count == 1)
        #expect(!daemon.logLines(containing: "Taken at once", "photo.png").isEmpty)
        let sidecars = try await harness.waitForSidecars(2)
        #expect(sidecars["plain.wav.chute.json"]?.status == .completed)
        #expect(daemon.logLines(containing: "Taken at once", "plain.mp3").isEmpty)
    }
}
