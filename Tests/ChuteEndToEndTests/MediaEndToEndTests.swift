import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon converts video and audio dropped into its inbox, and keeps its promises on bad input and on
/// SIGTERM in the middle of a long transcode.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaEndToEndTests {
    /// The rule that takes the harness's PNG sentinels (see ``DaemonHarness/waitForSidecars(_:timeout:)``), followed
    /// by `rules`.
    private static func harness(
        rules: String,
        settings: String = "",
        gracePeriod: String = "10s"
    ) throws
        -> DaemonHarness
    {
        try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                \(rules)
                """,
            settings: settings,
            gracePeriod: gracePeriod
        )
    }

    /// Makes a file in a staging folder and moves it into the inbox, so that the daemon sees it complete.
    private static func drop(
        _ name: String,
        into harness: DaemonHarness,
        make: (FilePath) throws -> Void
    ) throws {
        let staging = try harness.directory.makeDirectory("staging")
        try make(staging.appending(name))
        try FileManager.default.moveItem(
            atPath: staging.appending(name).string,
            toPath: harness.inbox.appending(name).string
        )
    }

    @Test func mkvBecomesMP4At720p() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: "*.mkv"
                    to: mp4
                    height: 720
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("holiday.mkv", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 1920,
                height: 1080,
                seconds: 3,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["holiday.mp4.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.engine == "video")
        #expect(sidecar.libraries["libavcodec"] != nil)
        #expect(sidecar.details["mode"] == "transcode")
        #expect(sidecar.details["outputWidth"] == "1280")
        let output = harness.outbox.appending("holiday.mp4")
        #expect(try MediaFixtures.entries("stream=codec_name,width,height", of: output) == "h264|1280|720\naac")
        let duration = try #require(Double(try MediaFixtures.entries("format=duration", of: output)))
        #expect(abs(duration - 3) < 0.1)
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func portraitPhoneClipStaysPortrait() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: "*.mov"
                    to: mp4
                    height: 320
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("IMG_0042.MOV", into: harness) { path in
            let landscape = path.removingLastComponent().appending("landscape.mp4")
            try MediaFixtures.makeClip(
                at: landscape,
                width: 640,
                height: 360,
                seconds: 2,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-i", landscape.string, "-c", "copy", "-metadata:s:v:0",
                "rotate=90", path.string,
            ])
        }

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["IMG_0042.mp4.chute.json"]?.status == .completed)
        let output = harness.outbox.appending("IMG_0042.mp4")
        // Stored landscape, turned by the matrix a player applies: shown 180 wide and 320 high.
        #expect(
            try MediaFixtures.entries("stream=width,height:stream_side_data=rotation", of: output).hasPrefix("320|180|")
        )
        #expect(
            try MediaFixtures.entries("stream_side_data=rotation", of: output).split(separator: "\n").first.flatMap {
                Int($0)
            }.map {
                abs($0)
            } == 90
        )
    }

    @Test func wavAndMP4BecomeMP3() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: sound
                    match: ["*.wav", "*.mp4"]
                    to: mp3
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("song.wav", into: harness) { path in
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-ac", "2",
                "-metadata", "title=Inbox Song", path.string,
            ])
        }
        try Self.drop("talk.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 320,
                height: 240,
                seconds: 2,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
        }

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["song.mp3.chute.json"]?.status == .completed)
        #expect(sidecars["talk.mp3.chute.json"]?.status == .completed)
        #expect(sidecars["talk.mp3.chute.json"]?.engine == "audio")
        let song = harness.outbox.appending("song.mp3")
        #expect(try MediaFixtures.entries("stream=codec_name", of: song) == "mp3")
        #expect(try MediaFixtures.entries("format_tags=title", of: song) == "Inbox Song")
        let talk = harness.outbox.appending("talk.mp3")
        #expect(try MediaFixtures.entries("stream=codec_name", of: talk) == "mp3")
        let duration = try #require(Double(try MediaFixtures.entries("format=duration", of: talk)))
        #expect(abs(duration - 2) < 0.1)
    }

    @Test func compliantMP4IsRemuxed() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: "*.mp4"
                    to: mp4
                    height: 720
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("small.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 640,
                height: 360,
                seconds: 2,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["small.mp4.chute.json"])
        #expect(sidecar.status == .completed)
        #expect(sidecar.details["mode"] == "remux")
        #expect(sidecar.details["note"] == "every stream was copied without re-encoding")
        #expect(sidecar.warnings.isEmpty)
        let packets = { (path: FilePath) in try MediaFixtures.entries("packet=size", of: path) }
        #expect(try packets(harness.outbox.appending("small.mp4")) == packets(harness.inbox.appending("small.mp4")))
    }

    @Test func playlistNamedMovieIsRefused() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: "*.mp4"
                    to: mp4
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("movie.mp4", into: harness) { path in
            try "#EXTM3U\n#EXTINF:10,\nfile:///etc/passwd\n".write(
                toFile: path.string,
                atomically: true,
                encoding: .utf8
            )
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["movie.mp4.chute.json"])
        #expect(sidecar.status == .failed)
        #expect(sidecar.error?.code == "unsupportedInput")
        #expect(sidecar.error?.message.contains("playlist") == true)
        #expect(sidecar.output == nil)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("movie.mp4").string))
    }

    @Test func damagedMediaFailsWithFFmpegsMessageAndTheDaemonGoesOn() async throws {
        // A cut-off MP4 looks like one still being written; it is waited for `incompleteTimeout`, shortened here.
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: ["*.mp4", "*.mkv"]
                    to: mp4
                    output: ./outbox
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let whole = try harness.directory.makeDirectory("made").appending("whole.mp4")
        try MediaFixtures.makeClip(at: whole, seconds: 2, codecArguments: MediaFixtures.h264AAC)
        // The CLI writes the MP4 index (`moov`) at the end: the first half of the file has none.
        try Self.drop("nomoov.mp4", into: harness) { try Fixtures.truncatedCopy(of: whole, to: $0, keeping: 0.5) }
        try Self.drop("noise.mkv", into: harness) { try Fixtures.makeRandomFile(at: $0, bytes: 100_000) }
        try Self.drop("empty.mp4", into: harness) { try Data().write(to: URL(fileURLWithPath: $0.string)) }
        try Self.drop("good.mp4", into: harness) {
            try FileManager.default.copyItem(atPath: whole.string, toPath: $0.string)
        }

        let sidecars = try await harness.waitForSidecars(4)

        let noMoov = try #require(sidecars["nomoov.mp4.chute.json"])
        #expect(noMoov.status == .failed)
        #expect(noMoov.error?.code == "corruptInput")
        #expect(noMoov.error?.message.contains("moov atom not found") == true, "\(String(describing: noMoov.error))")
        #expect(sidecars["noise.mp4.chute.json"]?.error?.code == "unsupportedInput")
        #expect(sidecars["empty.mp4.chute.json"]?.error?.code == "corruptInput")
        #expect(sidecars["good.mp4.chute.json"]?.status == .completed)
        // FFmpeg's own message reaches the daemon's log as a warning tied to the job, once the worker's burst of
        // messages has ended (up to 100 ms after its last line, perhaps after the sidecar).
        _ = try await daemon.waitForLog("Worker message", "moov atom not found", noMoov.jobID, timeout: 10)
        #expect(!daemon.logLines(containing: "Taking a file that is still not ready", "nomoov.mp4").isEmpty)
        for name in ["nomoov.mp4", "noise.mp4", "empty.mp4"] {
            #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending(name).string))
        }
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// An audiobook cut off right after its index (`broken/m4b_truncated_after_moov.m4b`: the index declares 107
    /// minutes, no sample is there) is the input's fault, copied or re-encoded, and quarantine takes it.
    @Test func truncatedAudiobookIsCorruptInputAndQuarantined() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        let harness = try Self.harness(
            rules: """
                  - name: books
                    match: "*.m4b"
                    to: m4a
                    output: ./outbox
                    quarantine: ./quarantine
                  - name: books-mp3
                    match: "*.mp4"
                    to: mp3
                    output: ./outbox
                    quarantine: ./quarantine
                """,
            settings: "  incompleteTimeout: 1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let source = Corpus.folder.appending("broken/m4b_truncated_after_moov.m4b")
        for name in ["book.m4b", "book.mp4"] {
            try Self.drop(name, into: harness) {
                try FileManager.default.copyItem(atPath: source.string, toPath: $0.string)
            }
        }
        for name in ["book.m4b", "book.mp4"] {
            try await daemon.waitForLog("Source quarantined", name, timeout: 90)
            let reason = try String(
                contentsOfFile: harness.directory.appending("quarantine/\(name).reason.txt").string,
                encoding: .utf8
            )
            #expect(reason.contains("corruptInput"), "\(name): \(reason)")
        }
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func sigtermDuringALongTranscodeExitsZeroAndLeavesNothing() async throws {
        let harness = try Self.harness(
            rules: """
                  - name: videos
                    match: "*.mp4"
                    to: mp4
                    height: 720
                    output: ./outbox
                """,
            settings: "  concurrency: {video: 1}",
            gracePeriod: "1s"
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        // A minute of 1080p takes the encoder far longer than the grace period.
        try Self.drop("long.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 1920,
                height: 1080,
                seconds: 60,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
        }
        // A long job logs its progress every 5 s: percent done, speed against real time, and time left (once its
        // pace is known).
        let progress = try await daemon.waitForLog("Job progress", "long.mp4", "eta=")
        #expect(progress[0].contains("progress=") && progress[0].contains("speed=") && progress[0].contains("eta="))

        let signalled = ContinuousClock.now
        daemon.send(SIGTERM)

        // The grace period is 1 s; cancelling the transcode and cleaning up must fit in the next 2 s or so.
        let exit = try await daemon.waitForExit(timeout: 10)
        print("media SIGTERM: the daemon exited \(ContinuousClock.now - signalled) after the signal (grace period 1 s)")
        #expect(exit.status == 0 && !exit.signalled)
        #expect(daemon.logLines(containing: "Job cancelled by shutdown").count == 1)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("long.mp4").string))
        #expect(harness.temporaryFiles().isEmpty)
        #expect(harness.sidecars().isEmpty)
    }
}
