import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Rules with `groupBy: folder` to a video or audio format, on the real daemon: the clips of a folder copied in with
/// `cp -r` become one file in natural name order, lasting their summed duration: copied packet for packet when the
/// clips match, re-encoded to the first clip's shape when they differ.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct GroupMediaEndToEndTests {
    private static func harness() throws -> DaemonHarness {
        try DaemonHarness(
            afterSentinels: """
                  - name: reel
                    match: "*.{mp4,mov,mkv}"
                    to: mp4
                    output: ./outbox
                    groupBy: folder
                  - name: tape
                    match: "*.wav"
                    to: mp3
                    output: ./outbox
                    groupBy: folder
                """
        )
    }

    /// The packets of a stream (`v:0`, `a:0`), counted by `ffprobe`.
    private static func packetCount(_ path: FilePath, stream: String) throws -> Int {
        let count = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-select_streams", stream, "-count_packets", "-show_entries",
            "stream=nb_read_packets", "-of", "csv=p=0", path.string,
        ]).standardOutput
        return try #require(Int(count.trimmingCharacters(in: .whitespacesAndNewlines)), "\(count)")
    }

    /// What `ffmpeg` reports decoding the whole file: empty for a clean file.
    private static func decodingErrors(_ path: FilePath) throws -> String {
        try CommandLineTool.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path.string, "-f", "null", "-"])
            .standardError.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func clipsThatDifferAreReencodedToTheFirstsShapeAndJoinedInNameOrder() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        // 1: 320x240 at 25 fps, 2 s; 2: 640x360 at 30 fps, 1.5 s, a Matroska file; 10: a portrait phone clip (a
        // 240x320 picture turned by its display matrix), 1 s. Natural order: 1, 2, 10.
        let clips = try harness.directory.makeDirectory("staging/holiday")
        try MediaFixtures.makeClip(at: clips.appending("1.mp4"), seconds: 2, codecArguments: MediaFixtures.h264AAC)
        try MediaFixtures.makeClip(
            at: clips.appending("2.mkv"),
            width: 640,
            height: 360,
            seconds: 1.5,
            rate: 30,
            sampleRate: 44100,
            codecArguments: MediaFixtures.h264AAC
        )
        let upright = harness.directory.path.appending("upright.mp4")
        try MediaFixtures.makeClip(
            at: upright,
            width: 240,
            height: 320,
            seconds: 1,
            codecArguments: MediaFixtures.h264AAC
        )
        try MediaFixtures.remux(
            upright,
            to: clips.appending("10.mov"),
            arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"]
        )
        try CommandLineTool.run(["cp", "-r", clips.string, harness.inbox.string])

        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        let sidecar = try #require(sidecars["holiday.mp4.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        print("joined clips: \(sidecar.details)")
        #expect(sidecar.details["mode"] == "joined (re-encoded)")
        #expect(sidecar.details["inputFiles"] == "3")
        let inputs = try #require(sidecar.inputs)
        #expect(inputs.map { FilePath($0.path).lastComponent?.string } == ["1.mp4", "2.mkv", "10.mov"])

        let output = harness.outbox.appending("holiday.mp4")
        let probe = try MediaFixtures.probe(output)
        let duration = try #require(probe.duration)
        print("joined duration: \(duration) s of 2 + 1.5 + 1 s; streams \(probe.streams.count)")
        #expect(abs(duration - 4.5) <= 0.1, "\(duration)")
        let video = try #require(probe.streams("video").first)
        #expect(video["width"] as? Int == 320 && video["height"] as? Int == 240, "\(video)")
        #expect(video["codec_name"] as? String == "h264")
        #expect(probe.streams("audio").count == 1)
        #expect(try MediaFixtures.rotation(of: output) == 0)
        // 2 s + 1.5 s + 1 s at 25 fps.
        let frames = try Self.packetCount(output, stream: "v:0")
        print("joined frames: \(frames)")
        #expect(abs(frames - 112) <= 2, "\(frames)")
        #expect(try Self.decodingErrors(output) == "")
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
        let outputs = harness.directory.files(below: "outbox").filter {
            !$0.hasSuffix(".chute.json") && !$0.hasPrefix("zz-sentinel")
        }
        #expect(outputs == ["holiday.mp4"])
    }

    @Test func clipsThatMatchAreJoinedWithoutReencoding() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let clips = try harness.directory.makeDirectory("staging/same")
        var packets = (video: 0, audio: 0)
        for (name, seconds) in [("a.mp4", 1.0), ("b.mp4", 2.0), ("c.mp4", 1.5)] {
            let clip = clips.appending(name)
            try MediaFixtures.makeClip(at: clip, seconds: seconds, codecArguments: MediaFixtures.h264AAC)
            packets.video += try Self.packetCount(clip, stream: "v:0")
            packets.audio += try Self.packetCount(clip, stream: "a:0")
        }
        try CommandLineTool.run(["cp", "-r", clips.string, harness.inbox.string])

        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        let sidecar = try #require(sidecars["same.mp4.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        print("copied join: \(sidecar.details)")
        #expect(sidecar.details["mode"] == "joined")
        let output = harness.outbox.appending("same.mp4")
        let duration = try #require(try MediaFixtures.probe(output).duration)
        let joined = (
            video: try Self.packetCount(output, stream: "v:0"), audio: try Self.packetCount(output, stream: "a:0")
        )
        print("copied join: \(duration) s, packets \(joined) of \(packets)")
        #expect(abs(duration - 4.5) <= 0.1, "\(duration)")
        #expect(joined == packets)
        #expect(try Self.decodingErrors(output) == "")
    }

    /// A clip without sound between clips with sound (a screen recording among phone clips) does not fail the group:
    /// it gets silence for as long as its picture lasts, and the joined video's sound lasts as long as its picture.
    @Test func aClipWithoutSoundGetsSilence() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let clips = try harness.directory.makeDirectory("staging/mixed")
        try MediaFixtures.makeClip(at: clips.appending("1.mp4"), seconds: 1, codecArguments: MediaFixtures.h264AAC)
        let withSound = harness.directory.path.appending("sounded.mp4")
        try MediaFixtures.makeClip(at: withSound, seconds: 1.5, codecArguments: MediaFixtures.h264AAC)
        try MediaFixtures.remux(withSound, to: clips.appending("2.mp4"), arguments: ["-c", "copy", "-an"])
        try MediaFixtures.makeClip(at: clips.appending("3.mp4"), seconds: 1, codecArguments: MediaFixtures.h264AAC)
        try CommandLineTool.run(["cp", "-r", clips.string, harness.inbox.string])

        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        let sidecar = try #require(sidecars["mixed.mp4.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(sidecar.warnings.contains { $0.contains("no sound") }, "\(sidecar.warnings)")
        let output = harness.outbox.appending("mixed.mp4")
        let durations = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-show_entries", "stream=codec_type,duration", "-of", "csv=p=0", output.string,
        ]).standardOutput.split(separator: "\n").map { $0.split(separator: ",") }
        let video = try #require(durations.first { $0.first == "video" }.flatMap { Double($0[1]) }, "\(durations)")
        let audio = try #require(durations.first { $0.first == "audio" }.flatMap { Double($0[1]) }, "\(durations)")
        #expect(abs(video - 3.5) < 0.15, "video \(video) s")
        #expect(abs(audio - video) < 0.15, "audio \(audio) s, video \(video) s")
        #expect(try Self.decodingErrors(output).isEmpty)
        #expect(harness.temporaryFiles().isEmpty)
    }

    @Test func soundFilesBecomeOneTrack() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let tracks = try harness.directory.makeDirectory("staging/session")
        // The second is 24-bit: the joined FLAC takes the deepest depth for every track (a FLAC decoder refuses a
        // change of depth within a stream).
        for (name, rate, seconds, codec) in [
            ("01.wav", 44100, 1.0, "pcm_s16le"), ("02.wav", 48000, 2.0, "pcm_s24le"),
            ("03.wav", 22050, 0.5, "pcm_s16le"),
        ] {
            try MediaFixtures.makeClip(
                at: tracks.appending(name),
                width: nil,
                seconds: seconds,
                sampleRate: rate,
                codecArguments: ["-c:a", codec]
            )
        }
        try CommandLineTool.run(["cp", "-r", tracks.string, harness.inbox.string])

        let sidecars = try await harness.waitForSidecars(1, timeout: 120)
        let sidecar = try #require(sidecars["session.mp3.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        print("joined tracks: \(sidecar.details)")
        let output = harness.outbox.appending("session.mp3")
        let probe = try MediaFixtures.probe(output)
        let audio = try #require(probe.streams("audio").first)
        let duration = try #require(probe.duration)
        print("joined track: \(duration) s of 1 + 2 + 0.5 s, \(audio["sample_rate"] ?? "")")
        #expect(abs(duration - 3.5) <= 0.1, "\(duration)")
        // The highest rate among the tracks.
        #expect(audio["sample_rate"] as? String == "48000")
        #expect(try Self.decodingErrors(output) == "")
    }
}
