import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon compresses a video to a file size in two passes, takes a poster frame out of a video, and makes a
/// looping sticker from part of one; picture inputs of the same rules stay with the image engine.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct MediaFramesEndToEndTests {

    /// Makes a file in a staging folder and moves it into the inbox, so that the daemon sees it complete.
    private static func drop(_ name: String, into harness: DaemonHarness, make: (FilePath) throws -> Void) throws {
        let staging = try harness.directory.makeDirectory("staging")
        try make(staging.appending(name))
        try harness.moveIn([name], from: staging)
    }

    /// ImageMagick's answer for `format` (an `identify -format` string) on `path`.
    private static func identify(_ format: String, _ path: FilePath) throws -> String {
        try CommandLineTool.run(["identify", "-format", format, path.string]).standardOutput
    }

    // `veryfast`, not `ultrafast`: at 0.5 Mbit/s for 1080p, ultrafast's pictures stay above the bitrate even at
    // h264's coarsest quantiser (QP 51), so no bitrate makes them fit.
    @Test func maxFileSizeLandsAMinuteOf1080pJustUnderFiveMegabytes() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: small
                    match: "*.mp4"
                    to: mp4
                    maxFileSize: 5MB
                    preset: veryfast
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("talk.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 1920,
                height: 1080,
                seconds: 60,
                rate: 30,
                codecArguments: ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", "-c:a", "aac"]
            )
            // Otherwise the test would prove nothing: the source must be larger than the target.
            #expect(try FileManager.default.attributesOfItem(atPath: $0.string)[.size] as? Int ?? 0 > 5_000_000)
        }

        let sidecars = try await harness.waitForSidecars(1, timeout: 600)

        let sidecar = try #require(sidecars["talk.mp4.chute.json"])
        #expect(sidecar.status == .completed, "\(sidecar.error?.message ?? "")")
        #expect(sidecar.details["passes"] == "2")
        #expect(sidecar.details["videoBitrate"] != nil)
        let output = harness.outbox.appending("talk.mp4")
        let size = try FileManager.default.attributesOfItem(atPath: output.string)[.size] as? Int ?? 0
        print("maxFileSize 5MB: \(size) bytes, video bitrate \(sidecar.details["videoBitrate"] ?? "?")")
        #expect(size <= 5_000_000)
        #expect(size >= 4_750_000)
        #expect(try MediaFixtures.entries("stream=codec_name,width,height", of: output) == "h264|1920|1080\naac")
        let duration = try #require(Double(try MediaFixtures.entries("format=duration", of: output)))
        #expect(abs(duration - 60) < 0.1)
    }

    /// The size is divided over what the output lasts, not the source: 30 s kept of 40, played twice as fast, is
    /// 15 s, and both passes encode only those.
    @Test func maxFileSizeCountsTheTrimmedAndSpedUpLength() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: small
                    match: "*.mp4"
                    to: mp4
                    start: 5
                    end: 35
                    speed: 2
                    maxFileSize: 2MB
                    preset: veryfast
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("walk.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 640,
                height: 360,
                seconds: 40,
                rate: 30,
                codecArguments: ["-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", "-c:a", "aac"]
            )
            #expect(try FileManager.default.attributesOfItem(atPath: $0.string)[.size] as? Int ?? 0 > 2_000_000)
        }

        let sidecars = try await harness.waitForSidecars(1, timeout: 300)

        let sidecar = try #require(sidecars["walk.mp4.chute.json"])
        #expect(sidecar.status == .completed, "\(sidecar.error?.message ?? "")")
        #expect(sidecar.details["passes"] == "2")
        let output = harness.outbox.appending("walk.mp4")
        let size = try FileManager.default.attributesOfItem(atPath: output.string)[.size] as? Int ?? 0
        print("maxFileSize 2MB of 15 s: \(size) bytes, video bitrate \(sidecar.details["videoBitrate"] ?? "?")")
        #expect(size <= 2_000_000)
        #expect(size >= 1_900_000)
        let duration = try #require(Double(try MediaFixtures.entries("format=duration", of: output)))
        #expect(abs(duration - 15) < 0.1, "\(duration) s")
    }

    @Test func aVideoToJPGGivesTheFrameAtStart() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: posters
                    match: "*.mp4"
                    to: jpg
                    start: 3
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // Red for two seconds, then blue: the frame at 3 s is blue.
        try Self.drop("clip.mp4", into: harness) {
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=red:s=640x360:r=25:d=2", "-f",
                "lavfi", "-i", "color=c=blue:s=640x360:r=25:d=2", "-filter_complex", "[0:v][1:v]concat=n=2:v=1",
                "-c:v", "libx264", "-preset", "ultrafast", $0.string,
            ])
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["clip.jpg.chute.json"])
        #expect(sidecar.status == .completed, "\(sidecar.error?.message ?? "")")
        #expect(sidecar.engine == "video")
        let output = harness.outbox.appending("clip.jpg")
        #expect(try Self.identify("%m %w %h", output) == "JPEG 640 360")
        let colour = try Self.identify("%[fx:mean.r] %[fx:mean.b]", output).split(separator: " ").compactMap {
            Double($0)
        }
        #expect(colour.count == 2 && colour[0] < 0.1 && colour[1] > 0.8, "mean red and blue: \(colour)")
        print("poster at 3 s of red-then-blue: \(try Self.identify("%m %wx%h", output)), mean red and blue \(colour)")
        // The sentinel PNGs of the same lanes' rule went through the image engine.
        #expect(harness.sidecars().first { $0.key.contains("zz-sentinel-") }?.value.engine == "image")
    }

    @Test func aVideoToPNGWithoutStartGivesARepresentativeFrameNotTheBlackIntro() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: posters
                    match: "*.mov"
                    to: png
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // A second of black before the picture, as many recordings start.
        try Self.drop("intro.mov", into: harness) {
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "color=c=black:s=480x270:r=25:d=1", "-f",
                "lavfi", "-i", "testsrc2=s=480x270:r=25:d=3", "-filter_complex", "[0:v][1:v]concat=n=2:v=1",
                "-c:v", "libx264", "-preset", "ultrafast", $0.string,
            ])
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["intro.png.chute.json"])
        #expect(sidecar.status == .completed, "\(sidecar.error?.message ?? "")")
        let output = harness.outbox.appending("intro.png")
        #expect(try Self.identify("%m %w %h", output) == "PNG 480 270")
        let mean = try #require(Double(try Self.identify("%[fx:mean]", output)))
        #expect(mean > 0.2, "the poster is dark: mean \(mean)")
        let time = try #require(Double(sidecar.details["frameTime"] ?? ""))
        #expect(time >= 1)
        print("poster without start: the frame at \(time) s (1 s of black before the picture), mean \(mean)")
    }

    @Test func aVideoToGIFWithARangeGivesALoopingStickerUnderOneMegabyte() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: stickers
                    match: "*.mp4"
                    to: gif
                    start: 1
                    duration: 3
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("cat.mp4", into: harness) {
            try MediaFixtures.makeClip(
                at: $0,
                width: 1280,
                height: 720,
                seconds: 6,
                rate: 30,
                codecArguments: MediaFixtures.h264AAC
            )
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["cat.gif.chute.json"])
        #expect(sidecar.status == .completed, "\(sidecar.error?.message ?? "")")
        #expect(sidecar.engine == "video")
        #expect(sidecar.details["verification"] == "read back and decoded entirely")
        let output = harness.outbox.appending("cat.gif")
        let size = try FileManager.default.attributesOfItem(atPath: output.string)[.size] as? Int ?? 0
        #expect(size > 0 && size < 1_000_000)
        // 512 px on the longest side, the ratio kept.
        let sizes = Set(try Self.identify("%W %H\n", output).split(separator: "\n"))
        #expect(sizes == ["512 288"])
        // 3 s at 15 frames a second, each shown for 1/15 s (GIF delays are in hundredths: 6 or 7).
        let delays = try Self.identify("%T\n", output).split(separator: "\n").compactMap { Int($0) }
        #expect((43...47).contains(delays.count), "\(delays.count) frames")
        #expect(delays.allSatisfy { $0 == 6 || $0 == 7 }, "\(Set(delays))")
        // Loops forever: a NETSCAPE2.0 application extension whose loop count is 0.
        let bytes = try #require(FileManager.default.contents(atPath: output.string))
        let netscape = try #require(bytes.firstRange(of: Data("NETSCAPE2.0".utf8)))
        let loop = Array(bytes[netscape.upperBound..<(netscape.upperBound + 4)])
        #expect(loop == [3, 1, 0, 0])
        print(
            "sticker: \(size) bytes, \(sizes.sorted()) px, \(delays.count) frames, delays \(Set(delays).sorted()), "
                + "NETSCAPE2.0 loop bytes \(loop)"
        )
    }

    @Test func checkExplainAndConvertNameTheEngineThatWritesTheTargetFromTheContent() async throws {
        let directory = try TemporaryDirectory(prefix: "frames-cli")
        defer { directory.remove() }
        let inbox = try directory.makeDirectory("in")
        let config = directory.appending("rules.yaml")
        try """
        watch:
          - path: ./in
        rules:
          - name: posters
            match: ["*.mp4", "*.png"]
            to: jpg
            start: 1
            output: ./out
        """.write(toFile: config.string, atomically: true, encoding: .utf8)
        let clip = inbox.appending("clip.mp4")
        try MediaFixtures.makeClip(at: clip, width: 320, height: 240, seconds: 2, codecArguments: MediaFixtures.h264AAC)
        try Fixtures.makeImage(at: inbox.appending("photo.png"), width: 32, height: 32)

        let check = try ChuteProcess(["check", config.string])
        #expect(try await check.waitForExit().status == 0, "\(check.log)")
        let writers = "→ jpg (image engine; video engine from video; pdf engine from pdf)"
        #expect(check.output.contains { $0.contains(writers) }, "\(check.output)")
        #expect(!check.output.contains { $0.hasPrefix("warning:") }, "\(check.output)")
        // An image operation on the same rule does nothing to the videos, and check says so.
        let cropping = directory.appending("cropping.yaml")
        try String(contentsOfFile: config.string, encoding: .utf8).appending("\n    crop: 1:1\n")
            .write(toFile: cropping.string, atomically: true, encoding: .utf8)
        let croppingCheck = try ChuteProcess(["check", cropping.string])
        #expect(try await croppingCheck.waitForExit().status == 0, "\(croppingCheck.log)")
        #expect(
            croppingCheck.output.filter { $0.hasPrefix("warning:") } == [
                "warning: rule 'posters': 'match: *.mp4' takes mp4 files, which the video engine writes to jpg "
                    + "without 'crop'"
            ],
            "\(croppingCheck.output)"
        )

        let video = try ChuteProcess(["explain", "--config", config.string, clip.string])
        _ = try await video.waitForExit()
        #expect(video.output.contains { $0.hasPrefix("engine: video (for mp4 content") }, "\(video.output)")
        let photo = try ChuteProcess(["explain", "--config", config.string, inbox.appending("photo.png").string])
        _ = try await photo.waitForExit()
        #expect(photo.output.contains { $0.hasPrefix("engine: image (for png content") }, "\(photo.output)")

        let poster = directory.appending("poster.jpg")
        let convert = try ChuteProcess(["convert", clip.string, poster.string, "--start", "1"])
        #expect(try await convert.waitForExit().status == 0, "\(convert.log)")
        let format = try CommandLineTool.run(["identify", "-format", "%m %w %h", poster.string]).standardOutput
        #expect(format == "JPEG 320 240")
    }
}
