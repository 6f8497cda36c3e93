import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon trims, crops, turns, mirrors and reshapes video: `start`/`end`/`duration` (on keyframes without
/// re-encoding when `trimExact: false`), `crop`, `rotate` (by the display matrix in MP4), `flip`, `aspect`.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct VideoEditingEndToEndTests {

    /// Makes a file in a staging folder and moves it into the inbox, so that the daemon sees it complete.
    private static func drop(_ name: String, into harness: DaemonHarness, make: (FilePath) throws -> Void) throws {
        let staging = try harness.directory.makeDirectory("staging")
        try make(staging.appending(name))
        try FileManager.default.moveItem(
            atPath: staging.appending(name).string,
            toPath: harness.inbox.appending(name).string
        )
    }

    /// A clip of H.264 (a keyframe every second, no B-frames) and AAC.
    private static func makeClip(at path: FilePath, width: Int = 320, height: Int = 240, seconds: Double) throws {
        try MediaFixtures.makeClip(
            at: path,
            width: width,
            height: height,
            seconds: seconds,
            rate: 30,
            codecArguments: MediaFixtures.h264AAC + ["-g", "30", "-keyint_min", "30", "-sc_threshold", "0", "-bf", "0"]
        )
    }

    /// One packet as `ffprobe -show_packets -show_data_hash MD5` lists it.
    private struct PacketInfo: Equatable {
        var pts: Double
        var isKey: Bool
        var hash: String
    }

    /// The packets of the first video (or audio) stream, in file order.
    private static func packets(of path: FilePath, stream: String = "v:0") throws -> [PacketInfo] {
        let result = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-select_streams", stream, "-show_data_hash", "MD5", "-show_entries",
            "packet=pts_time,flags,data_hash", "-of", "json", path.string,
        ])
        let object = try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        let packets = object?["packets"] as? [[String: Any]] ?? []
        return packets.map { packet in
            PacketInfo(
                pts: (packet["pts_time"] as? String).flatMap(Double.init) ?? -1,
                isKey: (packet["flags"] as? String)?.hasPrefix("K") == true,
                hash: packet["data_hash"] as? String ?? ""
            )
        }
    }

    private static func duration(of path: FilePath) throws -> Double {
        try #require(Double(try MediaFixtures.entries("format=duration", of: path)))
    }

    @Test func trimWithoutReencodingCopiesTheKeyframeRange() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: cut
                    match: "*.mp4"
                    to: mp4
                    start: 2.5
                    end: "0:06.5"
                    trimExact: false
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("match.mp4", into: harness) { try Self.makeClip(at: $0, seconds: 10) }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["match.mp4.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.details["mode"] == "remux")
        // The keyframe at or before 2.5 s is the one at 2 s: the cut starts there.
        #expect(sidecar.details["trimStart"] == "2")
        let source = try Self.packets(of: harness.inbox.appending("match.mp4"))
        let range = source.filter { $0.pts >= 2 - 0.001 && $0.pts < 6.5 - 0.001 }
        let output = try Self.packets(of: harness.outbox.appending("match.mp4"))
        print(
            "trim on keyframes: source range \(range.count) packets from \(range.first?.pts ?? -1) s, output "
                + "\(output.count) packets from \(output.first?.pts ?? -1) s"
        )
        #expect(range.first?.isKey == true)
        #expect(output.count == range.count)
        #expect(output.first?.pts == 0)
        #expect(output.first?.isKey == true)
        #expect(output.map(\.hash) == range.map(\.hash))
    }

    @Test func exactTrimReencodesToTheDuration() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: cut
                    match: "*.mp4"
                    to: mp4
                    start: "00:00:02.5"
                    duration: 3
                    output: ./outbox
                  - name: sound
                    match: "*.wav"
                    to: flac
                    start: 1
                    end: 3.5
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("clip.mp4", into: harness) { try Self.makeClip(at: $0, seconds: 8) }
        try Self.drop("tone.wav", into: harness) { path in
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=6", path.string,
            ])
        }

        let sidecars = try await harness.waitForSidecars(2)

        let clip = try #require(sidecars["clip.mp4.chute.json"])
        #expect(clip.status == .completed, "\(String(describing: clip.error))")
        #expect(clip.details["mode"] == "transcode")
        let clipDuration = try Self.duration(of: harness.outbox.appending("clip.mp4"))
        let tone = try #require(sidecars["tone.flac.chute.json"])
        #expect(tone.status == .completed, "\(String(describing: tone.error))")
        let toneDuration = try Self.duration(of: harness.outbox.appending("tone.flac"))
        print("exact trim: clip.mp4 lasts \(clipDuration) s (3 asked), tone.flac \(toneDuration) s (2.5 asked)")
        #expect(abs(clipDuration - 3) <= 0.1)
        #expect(abs(toneDuration - 2.5) <= 0.1)
    }

    @Test func aStartPastTheEndFailsTheJobClearly() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: late
                    match: "*.mp4"
                    to: mp4
                    start: "0:20"
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("short.mp4", into: harness) { try Self.makeClip(at: $0, seconds: 3) }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["short.mp4.chute.json"])
        print("start past the end: \(sidecar.error?.code ?? "no error"): \(sidecar.error?.message ?? "")")
        #expect(sidecar.status == .failed)
        #expect(sidecar.error?.code == "unsupportedInput")
        #expect(sidecar.error?.message.contains("start (20.0 s) is past the end of the input") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("short.mp4").string))
        #expect(harness.temporaryFiles().isEmpty)
    }

    /// A clip whose sound outlasts its pictures (as phone clips and screen recordings often do), trimmed to a start
    /// after the last picture: the trim keeps sound only, which an mp4 would hold as a sound-only file, so the job
    /// fails and says why.
    @Test func aTrimThatKeepsNoPictureFailsTheJob() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: late
                    match: "*.mp4"
                    to: mp4
                    start: 3
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("talk.mp4", into: harness) { path in
            try CommandLineTool.run(
                [
                    "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=2",
                    "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=5",
                ] + MediaFixtures.h264AAC + [path.string]
            )
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["talk.mp4.chute.json"])
        print("trim past the pictures: \(sidecar.error?.code ?? "no error"): \(sidecar.error?.message ?? "")")
        #expect(sidecar.status == .failed)
        #expect(sidecar.error?.code == "unsupportedInput")
        #expect(sidecar.error?.message.contains("keeps no frame of the video") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("talk.mp4").string))
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func cropToASquare() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: square
                    match: "*.mp4"
                    to: mp4
                    crop: "1:1"
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("wide.mp4", into: harness) { try Self.makeClip(at: $0, width: 1280, height: 720, seconds: 2) }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["wide.mp4.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("wide.mp4")
        let size = try MediaFixtures.entries("stream=width,height", of: output).split(separator: "\n").first
        print("crop 1:1 of 1280x720: \(size ?? "nothing")")
        #expect(size == "720|720")
        #expect(abs(try Self.duration(of: output) - 2) <= 0.1)
    }

    @Test func rotateByTheDisplayMatrixKeepsThePackets() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: quarter
                    match: "IMG_0100.MOV"
                    to: mp4
                    rotate: 90
                    output: ./outbox
                  - name: half
                    match: "IMG_0101.MOV"
                    to: mp4
                    rotate: 180
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // A phone's portrait clip: landscape pictures that a matrix turns by a quarter.
        for name in ["IMG_0100.MOV", "IMG_0101.MOV"] {
            try Self.drop(name, into: harness) { path in
                let landscape = path.removingLastComponent().appending("landscape-\(name).mp4")
                try Self.makeClip(at: landscape, width: 640, height: 360, seconds: 2)
                try MediaFixtures.remux(landscape, to: path, arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"])
            }
        }

        let sidecars = try await harness.waitForSidecars(2)

        for (stem, degrees) in [("IMG_0100", 90), ("IMG_0101", 180)] {
            let sidecar = try #require(sidecars["\(stem).mp4.chute.json"])
            #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
            #expect(sidecar.details["mode"] == "remux")
            let source = harness.inbox.appending("\(stem).MOV")
            let output = harness.outbox.appending("\(stem).mp4")
            let before = try MediaFixtures.rotation(of: source)
            let after = try MediaFixtures.rotation(of: output)
            print("rotate \(degrees): display matrix rotation \(before) → \(after) (ffprobe, anticlockwise degrees)")
            // ffprobe gives the matrix's anticlockwise angle: a clockwise turn of the rule takes it that much lower.
            #expect(before != 0)
            #expect(((before - degrees - after) % 360 + 360) % 360 == 0)
            #expect(try MediaFixtures.entries("stream=width,height", of: output).hasPrefix("640|360"))
            let sourcePackets = try Self.packets(of: source)
            #expect(!sourcePackets.isEmpty)
            let identical = try Self.packets(of: output).map(\.hash) == sourcePackets.map(\.hash)
            #expect(identical)
            print("rotate \(degrees): \(sourcePackets.count) packets, identical to the source's: \(identical)")
        }
    }

    @Test func editsActOnThePictureAsShown() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: square
                    match: "square-*.mov"
                    to: mp4
                    crop: "1:1"
                    output: ./outbox
                  - name: turned
                    match: "turned-*.mp4"
                    to: mkv
                    rotate: 90
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // A portrait phone clip (landscape pictures and a quarter-turn matrix), and a plain landscape clip.
        try Self.drop("square-phone.mov", into: harness) { path in
            let landscape = path.removingLastComponent().appending("landscape-phone.mp4")
            try Self.makeClip(at: landscape, width: 640, height: 360, seconds: 1)
            try MediaFixtures.remux(landscape, to: path, arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"])
        }
        try Self.drop("turned-wide.mp4", into: harness) {
            try Self.makeClip(at: $0, width: 640, height: 360, seconds: 1)
        }

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["square-phone.mp4.chute.json"]?.status == .completed)
        #expect(sidecars["turned-wide.mkv.chute.json"]?.status == .completed)
        let square = harness.outbox.appending("square-phone.mp4")
        let turned = harness.outbox.appending("turned-wide.mkv")
        let squareSize = try MediaFixtures.entries("stream=width,height", of: square).split(separator: "\n").first
        let turnedSize = try MediaFixtures.entries("stream=width,height", of: turned).split(separator: "\n").first
        print(
            "as shown: crop 1:1 of a portrait 360x640 clip gives \(squareSize ?? "nothing") (rotation "
                + "\(try MediaFixtures.rotation(of: square))); rotate 90 into mkv gives \(turnedSize ?? "nothing")"
        )
        // The crop takes the largest square of the portrait picture, turned upright: no matrix is left to apply.
        #expect(squareSize == "360|360")
        #expect(try MediaFixtures.rotation(of: square) == 0)
        // Matroska keeps no matrix: the pixels are turned.
        #expect(turnedSize == "360|640")
        #expect(sidecars["turned-wide.mkv.chute.json"]?.details["mode"] == "transcode")
    }

    /// The brightness of the top and bottom halves of a video's first frame, 0–255.
    private static func halves(of path: FilePath, in directory: FilePath) throws -> [UInt8] {
        let pixels = directory.appending("halves-\(path.lastComponent!.stem).gray")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", path.string, "-frames:v", "1", "-vf",
            "scale=1:2:flags=area",
            "-f", "rawvideo", "-pix_fmt", "gray", pixels.string,
        ])
        return Array(try Data(contentsOf: URL(fileURLWithPath: pixels.string)))
    }

    @Test func flipMirrorsTopToBottom() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: mirror
                    match: "*.mp4"
                    to: mkv
                    flip: true
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // White above, black below.
        try Self.drop("halves.mp4", into: harness) { path in
            try CommandLineTool.run([
                "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
                "color=white:size=320x240:rate=30:duration=1,drawbox=y=120:h=120:color=black:t=fill", "-c:v",
                "libx264", "-preset", "ultrafast", path.string,
            ])
        }

        let sidecars = try await harness.waitForSidecars(1)

        let sidecar = try #require(sidecars["halves.mkv.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let before = try Self.halves(of: harness.inbox.appending("halves.mp4"), in: harness.directory.path)
        let after = try Self.halves(of: harness.outbox.appending("halves.mkv"), in: harness.directory.path)
        print("flip: top and bottom brightness \(before) → \(after)")
        #expect(before.count == 2 && before[0] > 200 && before[1] < 50)
        #expect(after.count == 2 && after[0] < 50 && after[1] > 200)
    }

    @Test func aspectPadsOrCrops() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: padded
                    match: "pad-*.mp4"
                    to: mp4
                    aspect: "1:1"
                    output: ./outbox
                  - name: cut
                    match: "crop-*.mp4"
                    to: mp4
                    aspect: "1:1"
                    aspectMode: crop
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop("pad-wide.mp4", into: harness) { try Self.makeClip(at: $0, width: 1280, height: 720, seconds: 1) }
        try Self.drop("crop-wide.mp4", into: harness) {
            try Self.makeClip(at: $0, width: 1280, height: 720, seconds: 1)
        }

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["pad-wide.mp4.chute.json"]?.status == .completed)
        #expect(sidecars["crop-wide.mp4.chute.json"]?.status == .completed)
        let padded = try MediaFixtures.entries("stream=width,height", of: harness.outbox.appending("pad-wide.mp4"))
        let cropped = try MediaFixtures.entries("stream=width,height", of: harness.outbox.appending("crop-wide.mp4"))
        print(
            "aspect 1:1 of 1280x720: pad \(padded.split(separator: "\n").first ?? ""), crop "
                + "\(cropped.split(separator: "\n").first ?? "")"
        )
        #expect(padded.split(separator: "\n").first == "1280|1280")
        #expect(cropped.split(separator: "\n").first == "720|720")
    }

    @Test func checkRefusesImpossibleVideoEdits() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: tilted
                    match: "*.mp4"
                    to: mp4
                    rotate: 45
                    output: ./outbox
                  - name: backwards
                    match: "*.mkv"
                    to: mkv
                    start: "1:30"
                    end: 60
                    output: ./outbox
                  - name: both
                    match: "*.mov"
                    to: mov
                    end: 10
                    duration: 5
                    output: ./outbox
                  - name: see-through
                    match: "*.webm"
                    to: webm
                    aspect: "4:5"
                    background: transparent
                    trimExact: false
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        let check = try ChuteProcess(["check", harness.configPath.string])
        let exit = try await check.waitForExit()
        #expect(exit.status != 0)
        let log = check.log.joined(separator: "\n")
        print(log)
        #expect(log.contains("a video turns by a multiple of 90 degrees"), "\(log)")
        #expect(log.contains("'end' (60 s) must come after 'start' (90 s)"), "\(log)")
        #expect(log.contains("set either 'end' or 'duration', not both"), "\(log)")
        #expect(log.contains("webm has no transparency; give an opaque 'background'"), "\(log)")
        #expect(log.contains("'trimExact' needs 'start', 'end' or 'duration'"), "\(log)")
    }
}
