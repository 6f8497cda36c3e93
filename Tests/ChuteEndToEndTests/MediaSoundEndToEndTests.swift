import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The real daemon changes a video's or a recording's speed without changing its pitch (`speed`), leaves a video's
/// sound out (`mute`) and brings its loudness to a target (`loudness`).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaSoundEndToEndTests {

    /// Writes a clip of `seconds` whose sound is a sine of `frequency` Hz at `volume` dB, with a test pattern at
    /// 30 frames a second unless `video` is false.
    private static func makeTone(
        at path: FilePath,
        seconds: Int,
        frequency: Int = 1000,
        volume: Int = -6,
        video: Bool = true,
        codec: [String]
    ) throws {
        var arguments = ["ffmpeg", "-nostdin", "-v", "error", "-y"]
        if video {
            arguments += ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=30:duration=\(seconds)"]
        }
        arguments += [
            "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=48000:duration=\(seconds)", "-af",
            "volume=\(volume)dB", "-ac", "2",
        ]
        try CommandLineTool.run(arguments + codec + [path.string])
    }

    /// The dominant frequency of a file's first audio stream, from the zero crossings of its decoded mono samples.
    private static func toneFrequency(of path: FilePath) throws -> Double {
        let samples = path.removingLastComponent().appending("\(path.lastComponent!.stem).f32")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-y", "-i", path.string, "-map", "0:a:0", "-ac", "1", "-ar", "48000",
            "-f", "f32le", samples.string,
        ])
        let data = try Data(contentsOf: URL(fileURLWithPath: samples.string))
        let values = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        // The first and last 10 % are left out: encoders' priming and padding blur the edges.
        let middle = values[(values.count / 10)..<(values.count * 9 / 10)]
        var crossings = 0
        var previous = middle.first ?? 0
        for value in middle.dropFirst() {
            if (previous < 0) != (value < 0) { crossings += 1 }
            previous = value
        }
        return Double(crossings) / 2 / (Double(middle.count) / 48000)
    }

    /// The integrated loudness of a file in LUFS, as FFmpeg's `ebur128` filter measures it.
    private static func loudness(of path: FilePath) throws -> Double {
        let result = try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-i", path.string, "-map", "0:a:0", "-af", "ebur128",
            "-f", "null", "-",
        ])
        // The summary's "I:         -16.0 LUFS" line comes last.
        let line = try #require(
            result.standardError.split(separator: "\n").last { $0.contains(" I: ") && $0.hasSuffix("LUFS") }
        )
        let number = line.split(separator: " ").dropLast().last.map(String.init) ?? ""
        return try #require(Double(number))
    }

    @Test func speedChangesTheDurationAndKeepsThePitch() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: fast
                    match: "*.mp4"
                    to: mp4
                    speed: 2
                    output: ./outbox
                  - name: slow
                    match: "*.wav"
                    to: m4a
                    speed: 0.25
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makeTone(at: staging.appending("clip.mp4"), seconds: 4, codec: MediaFixtures.h264AAC)
        try Self.makeTone(at: staging.appending("memo.wav"), seconds: 2, video: false, codec: [])
        #expect(abs(try Self.toneFrequency(of: staging.appending("clip.mp4")) - 1000) < 10)
        try harness.moveIn(["clip.mp4", "memo.wav"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        #expect(sidecars["clip.mp4.chute.json"]?.status == .completed)
        #expect(sidecars["memo.m4a.chute.json"]?.status == .completed)
        let fast = harness.outbox.appending("clip.mp4")
        let probe = try MediaFixtures.probe(fast)
        let duration = try #require(probe.duration)
        #expect(abs(duration - 2) <= 0.1, "2× of 4 s lasts \(duration) s")
        let frames = try MediaFixtures.entries("stream=nb_read_frames", of: fast, counting: true)
        #expect(abs((Int(frames) ?? 0) - 60) <= 2, "2 s at 30 frames a second, found \(frames) frames")
        let fastPitch = try Self.toneFrequency(of: fast)
        #expect(abs(fastPitch - 1000) / 1000 < 0.02, "the 1000 Hz tone became \(fastPitch) Hz")

        let slow = harness.outbox.appending("memo.m4a")
        let slowDuration = try #require(try MediaFixtures.probe(slow).duration)
        #expect(abs(slowDuration - 8) <= 0.1, "0.25× of 2 s lasts \(slowDuration) s")
        let slowPitch = try Self.toneFrequency(of: slow)
        #expect(abs(slowPitch - 1000) / 1000 < 0.02, "the 1000 Hz tone became \(slowPitch) Hz")
        print(
            "speed: 2× of a 4 s clip lasts \(duration) s, \(frames) frames, its 1000 Hz tone at \(fastPitch) Hz; "
                + "0.25× of a 2 s memo lasts \(slowDuration) s, its tone at \(slowPitch) Hz"
        )
    }

    @Test func muteLeavesTheSoundOutOfAVideoAndIsRefusedForAnAudioTarget() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: silent
                    match: "*.mp4"
                    to: mp4
                    mute: true
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makeTone(at: staging.appending("clip.mp4"), seconds: 2, codec: MediaFixtures.h264AAC)
        #expect(try MediaFixtures.probe(staging.appending("clip.mp4")).streams("audio").count == 1)
        try harness.moveIn(["clip.mp4"], from: staging)

        let sidecars = try await harness.waitForSidecars(1)

        #expect(sidecars["clip.mp4.chute.json"]?.status == .completed)
        let probe = try MediaFixtures.probe(harness.outbox.appending("clip.mp4"))
        #expect(probe.streams("audio").isEmpty)
        #expect(probe.streams("video").count == 1)
        // Muting acts on the streams kept, not on the picture: the video is copied.
        #expect(sidecars["clip.mp4.chute.json"]?.details["mode"] == "remux")

        let config = harness.directory.appending("audio.yaml")
        try """
        watch:
          - path: ./inbox
        rules:
          - name: silent-song
            match: "*.wav"
            to: mp3
            mute: true
            output: ./outbox
        """.write(toFile: config.string, atomically: true, encoding: .utf8)
        let check = try ChuteProcess(["check", config.string])
        let exit = try await check.waitForExit()
        #expect(exit.status != 0)
        #expect(check.log.contains { $0.contains("'mute' does not apply to audio target 'mp3'") }, "\(check.log)")
    }

    @Test func loudnessBringsAQuietRecordingToTheTarget() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: podcast
                    match: "*.wav"
                    to: m4a
                    loudness: -16
                    output: ./outbox
                  - name: film
                    match: "*.mp4"
                    to: mp4
                    loudness: -16
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        try Self.makeTone(
            at: staging.appending("quiet.wav"),
            seconds: 6,
            frequency: 440,
            volume: -35,
            video: false,
            codec: []
        )
        try Self.makeTone(
            at: staging.appending("loud.mp4"),
            seconds: 6,
            frequency: 440,
            volume: 12,
            codec: MediaFixtures.h264AAC
        )
        let quiet = try Self.loudness(of: staging.appending("quiet.wav"))
        let loud = try Self.loudness(of: staging.appending("loud.mp4"))
        #expect(quiet < -30 && loud > -10, "the fixtures measure \(quiet) and \(loud) LUFS")
        let sourcePictures = try MediaFixtures.packetSizes(of: staging.appending("loud.mp4"), stream: "v:0")
        try harness.moveIn(["quiet.wav", "loud.mp4"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)

        for (name, before) in [("quiet.m4a", quiet), ("loud.mp4", loud)] {
            #expect(sidecars["\(name).chute.json"]?.status == .completed)
            let measured = try Self.loudness(of: harness.outbox.appending(name))
            #expect(abs(measured + 16) <= 1, "\(name) measures \(measured) LUFS")
            print("loudness -16: \(name) measures \(measured) LUFS (ebur128), its source \(before) LUFS")
        }
        // The picture is untouched by `loudness`, so it is copied.
        #expect(!sourcePictures.isEmpty)
        #expect(
            try MediaFixtures.packetSizes(of: harness.outbox.appending("loud.mp4"), stream: "v:0") == sourcePictures
        )
    }

    /// Progress is the share of the output written: at twice the speed the output lasts half the input, and the
    /// records go on past half way rather than stopping there until the verification.
    @Test func progressOfASpedUpVideoGoesPastHalfWay() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: fast
                    match: "*.mkv"
                    to: mp4
                    speed: 2
                    preset: slower
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staging = try harness.directory.makeDirectory("staging")
        try MediaFixtures.makeClip(
            at: staging.appending("party.mkv"),
            width: 1920,
            height: 1080,
            // Long enough for several records (one every 5 s) during the transcode on a fast machine. Progress is
            // what the muxer has written, which trails what was read by the encoder's look-ahead and frame threads
            // (some 70 frames at this preset, a fifth of a 10 s output); the longer the clip, the smaller that share.
            seconds: 30,
            rate: 30,
            codecArguments: MediaFixtures.h264AAC
        )
        try harness.moveIn(["party.mkv"], from: staging)

        let sidecars = try await harness.waitForSidecars(1, timeout: 240)

        #expect(sidecars["party.mp4.chute.json"]?.status == .completed)
        let records = daemon.logLines(containing: "Job progress", "party.mkv")
        let shares = records.compactMap { line in
            Logfmt.parse(line)?["progress"].flatMap { $0.hasSuffix("%") ? Int($0.dropLast()) : nil }
        }
        try #require(shares.count >= 4, "too few progress records to judge: \(records)")
        // The transcode is 0–95 %, the read-back verification the rest; the transcode must pass half way, which a
        // share of the input's duration would not (it stops at 47 %).
        #expect(shares.contains { (51...94).contains($0) }, "the transcode's progress: \(shares)")
        #expect(shares.allSatisfy { $0 <= 100 })
    }
}
