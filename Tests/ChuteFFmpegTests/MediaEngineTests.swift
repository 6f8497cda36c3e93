import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Real conversions through the media engine, checked with `ffprobe`.
///
/// Serialized because FFmpeg's log is process-wide: the messages logged during a conversion are that conversion's
/// warnings only while one conversion runs at a time, as in a worker.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaEngineTests {
    @Test func mkvBecomesMP4At720p() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        let output = directory.appending("out.mp4")
        try MediaFixtures.makeClip(
            at: input,
            width: 1280,
            height: 960,
            seconds: 3,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac"]
        )

        let report = try Conversion.run(input, to: "mp4", output: output, options: ConversionOptions(["height": 720]))

        let probe = try MediaFixtures.probe(output)
        let video = try #require(probe.streams("video").first)
        #expect(video["codec_name"] as? String == "h264")
        #expect(video["width"] as? Int == 960)
        #expect(video["height"] as? Int == 720)
        #expect(probe.streams("audio").first?["codec_name"] as? String == "aac")
        let duration = try #require(probe.duration)
        #expect(abs(duration - 3) < 0.1)
        #expect(report.details["mode"] == "transcode")
        #expect(report.details["outputWidth"] == "960")
        #expect(report.details["outputHeight"] == "720")
        #expect(report.details["frames"] == "75")
        #expect(report.outputBytes == Int64(try Data(contentsOf: URL(fileURLWithPath: output.string)).count))
    }

    @Test func progressIsReportedAndEndsAtOne() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try MediaFixtures.makeClip(at: input, seconds: 2, codecArguments: ["-c:v", "libx264", "-c:a", "aac"])
        var reports: [JobProgress] = []

        _ = try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4")) { reports.append($0) }

        let fractions = reports.map(\.fraction)
        #expect(fractions.last == 1)
        #expect(fractions == fractions.sorted())
        #expect(fractions.allSatisfy { (0...1).contains($0) })
        // While it transcodes, the engine says how much of the 2 s input it has converted.
        let positions = reports.compactMap(\.mediaSeconds)
        #expect(!positions.isEmpty)
        #expect(positions == positions.sorted())
        #expect(positions.allSatisfy { (0...2.1).contains($0) })
        #expect(positions.last.map { $0 > 1.9 } == true)
    }

    /// Progress is what has been written, not what has been read. At a slow preset x264 takes in its look-ahead
    /// (60 frames at `slower`) before it gives out the first frame, so the reading runs seconds ahead of the
    /// encoding of a short clip; a fraction measured by it would make the job look fast at first and its time left
    /// too short (``JobPace`` estimates from these reports). Here a report comes with every packet read, and those
    /// before the first encoded frame say that nothing is converted yet. (The clip is scaled, so that it is encoded
    /// rather than copied.)
    @Test func progressCountsWhatWasWrittenNotWhatWasRead() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try MediaFixtures.makeClip(at: input, seconds: 4, rate: 30, codecArguments: MediaFixtures.h264AAC)
        var reports: [JobProgress] = []

        _ = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("out.mp4"),
            options: ConversionOptions(["preset": "slower", "height": 180])
        ) { reports.append($0) }

        let positions = reports.compactMap(\.mediaSeconds)
        let nothingYet = positions.prefix { $0 == 0 }.count
        // 60 frames are 2 s of the input: some 150 packets of picture and sound are read before the first frame is
        // written (179 here).
        #expect(nothingYet >= 60, "\(nothingYet) reports of nothing written, of \(positions.count)")
        #expect(positions == positions.sorted())
        // The frames still in the encoder when the reading ends are written by its flush, after the last report.
        #expect(positions.last.map { (1..<4).contains($0) } == true, "\(positions.suffix(3))")
        print(
            "\(nothingYet) of \(positions.count) reports before the first frame was written; the last at \(positions.last ?? 0) s"
        )
    }

    @Test(arguments: ["mp4", "mkv"])
    func portraitPhoneClipStaysPortrait(target: String) throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let landscape = directory.appending("landscape.mp4")
        let input = directory.appending("IMG_0001.MOV")
        let output = directory.appending("out.\(target)")
        // A phone stores portrait video as landscape pictures and a display matrix that turns them.
        try MediaFixtures.makeClip(
            at: landscape,
            width: 640,
            height: 360,
            seconds: 2,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac"]
        )
        try MediaFixtures.remux(landscape, to: input, arguments: ["-c", "copy", "-metadata:s:v:0", "rotate=90"])
        try #require(try MediaFixtures.rotation(of: input) != 0)

        let report = try Conversion.run(input, to: target, output: output, options: ConversionOptions(["height": 320]))

        let video = try #require(try MediaFixtures.probe(output).streams("video").first)
        let width = try #require(video["width"] as? Int)
        let height = try #require(video["height"] as? Int)
        let rotation = try MediaFixtures.rotation(of: output)
        // Shown as a player shows it: rotated by the matrix when there is one.
        let shown = rotation % 180 == 0 ? (width, height) : (height, width)
        #expect(shown == (180, 320))
        #expect(report.details["outputWidth"] == "180")
        #expect(report.details["outputHeight"] == "320")
        if target == "mp4" {
            #expect(rotation != 0, "MP4 keeps the display matrix")
        } else {
            #expect(rotation == 0, "Matroska cannot store the matrix, so the pixels are turned")
        }
    }

    @Test func wavBecomesMP3WithTags() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.wav")
        let output = directory.appending("out.mp3")
        try MediaFixtures.makeClip(
            at: input,
            width: nil,
            seconds: 3,
            sampleRate: 44100,
            codecArguments: ["-metadata", "title=Drop Folder Blues", "-metadata", "artist=Chute", "-c:a", "pcm_s16le"]
        )

        let report = try Conversion.run(input, to: "mp3", output: output)

        let probe = try MediaFixtures.probe(output)
        let audio = try #require(probe.streams("audio").first)
        #expect(audio["codec_name"] as? String == "mp3")
        #expect(audio["sample_rate"] as? String == "44100")
        #expect(abs(try #require(probe.duration) - 3) < 0.1)
        #expect(probe.tags["title"] == "Drop Folder Blues")
        #expect(probe.tags["artist"] == "Chute")
        #expect(report.details["mode"] == "transcode")
        #expect(report.details["outputAudio"] == "mp3 44100 Hz 2 ch")
    }

    @Test func longOutputIsDecodedAtBothEnds() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.wav")
        let output = directory.appending("out.mp3")
        try MediaFixtures.makeClip(at: input, width: nil, seconds: 30, codecArguments: ["-c:a", "pcm_s16le"])

        let report = try Conversion.run(input, to: "mp3", output: output)

        #expect(report.details["verification"] == "read back; decoded the first and last 2 s")
        let duration = try #require(report.details["outputDuration"].flatMap(Double.init))
        #expect(abs(duration - 30) < 0.1)
    }

    @Test func audioIsExtractedFromAVideo() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp4")
        let output = directory.appending("out.mp3")
        try MediaFixtures.makeClip(at: input, seconds: 2, codecArguments: ["-c:v", "libx264", "-c:a", "aac"])

        let report = try Conversion.run(
            input,
            to: "mp3",
            output: output,
            options: ConversionOptions(["audioBitrate": 128_000])
        )

        let probe = try MediaFixtures.probe(output)
        #expect(probe.streams("video").isEmpty)
        #expect(probe.streams("audio").first?["codec_name"] as? String == "mp3")
        #expect(probe.streams("audio").first?["bit_rate"] as? String == "128000")
        #expect(abs(try #require(probe.duration) - 2) < 0.1)
        #expect(report.details["outputVideo"] == nil)
    }

    @Test func compliantMP4IsRemuxedPacketForPacket() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp4")
        let output = directory.appending("out.mp4")
        try MediaFixtures.makeClip(
            at: input,
            width: 640,
            height: 360,
            seconds: 2,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac"]
        )

        let report = try Conversion.run(input, to: "mp4", output: output, options: ConversionOptions(["height": 720]))

        #expect(report.details["mode"] == "remux")
        #expect(report.details["note"] != nil)
        #expect(report.details["outputVideo"] == "h264 640x360 (copied)")
        #expect(
            try MediaFixtures.packetSizes(of: output, stream: "v:0")
                == MediaFixtures.packetSizes(of: input, stream: "v:0")
        )
        #expect(
            try MediaFixtures.packetSizes(of: output, stream: "a:0")
                == MediaFixtures.packetSizes(of: input, stream: "a:0")
        )
    }

    /// The default audio bitrate is what an encode gets, not a reason to re-encode: a privacy strip of a clip with
    /// 256k AAC copies its packets; only the rule's own `audioBitrate` re-encodes the sound down. The clip is longer
    /// than the read-back decodes whole, so the copy is checked at its two ends, one frame of each stream.
    @Test func soundAboveTheDefaultBitrateIsCopiedUnlessTheRuleSetsOne() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp4")
        try MediaFixtures.makeClip(
            at: input,
            width: 640,
            height: 360,
            seconds: 12,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac", "-b:a", "256k"]
        )

        let stripped = directory.appending("strip.mp4")
        let strip = try Conversion.run(
            input,
            to: "mp4",
            output: stripped,
            options: ConversionOptions(["metadata": "strip"])
        )
        let capped = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("capped.mp4"),
            options: ConversionOptions(["audioBitrate": 128_000])
        )

        #expect(strip.details["mode"] == "remux")
        #expect(
            strip.details["verification"]
                == "read back the first and last 2 s; encoded streams decoded there, copied streams their first frame there"
        )
        #expect(
            try MediaFixtures.packetSizes(of: stripped, stream: "a:0")
                == MediaFixtures.packetSizes(of: input, stream: "a:0")
        )
        #expect(capped.details["mode"] == "transcode")
        #expect(capped.details["outputVideo"] == "h264 640x360 (copied)")
        let bitRate = try MediaFixtures.probe(directory.appending("capped.mp4")).streams("audio").first?["bit_rate"]
        #expect(Int(try #require(bitRate as? String)).map { $0 < 160_000 } == true, "\(String(describing: bitRate))")
    }

    @Test func aRuleThatAsksForMoreIsNotARemux() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp4")
        try MediaFixtures.makeClip(
            at: input,
            width: 640,
            height: 360,
            seconds: 2,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac"]
        )

        let smaller = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("small.mp4"),
            options: ConversionOptions(["width": 320])
        )
        let quality = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("crf.mp4"),
            options: ConversionOptions(["crf": 30])
        )
        let stereo = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("mono.mp4"),
            options: ConversionOptions(["channels": 1])
        )

        #expect(smaller.details["mode"] == "transcode")
        #expect(smaller.details["outputWidth"] == "320")
        #expect(quality.details["mode"] == "transcode")
        #expect(stereo.details["mode"] == "transcode")
        #expect(stereo.details["outputVideo"] == "h264 640x360 (copied)")
        #expect(
            try MediaFixtures.probe(directory.appending("mono.mp4")).streams("audio").first?["channels"] as? Int == 1
        )
    }

    @Test func textSubtitlesBecomeTimedTextInMP4AndStaySubRipInMKV() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let subtitles = directory.appending("in.srt")
        let input = directory.appending("in.mkv")
        try "1\n00:00:00,500 --> 00:00:01,500\nHello from Chute\n\n".write(
            toFile: subtitles.string,
            atomically: true,
            encoding: .utf8
        )
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
            "-i", subtitles.string, "-c:v", "libx264", "-c:s", "srt", input.string,
        ])

        let mp4 = try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4"))
        let mkv = try Conversion.run(input, to: "mkv", output: directory.appending("out.mkv"))

        #expect(
            try MediaFixtures.probe(directory.appending("out.mp4")).streams("subtitle").first?["codec_name"] as? String
                == "mov_text"
        )
        #expect(
            try MediaFixtures.probe(directory.appending("out.mkv")).streams("subtitle").first?["codec_name"] as? String
                == "subrip"
        )
        #expect(mp4.details["outputSubtitles"] == "subrip → mov_text")
        #expect(mkv.details["outputSubtitles"] == "subrip (copied)")
        let text = try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-i", directory.appending("out.mp4").string, "-map", "0:s", "-f",
            "srt", "-",
        ]).standardOutput
        #expect(text.contains("00:00:00,500 --> 00:00:01,500"))
        #expect(text.contains("Hello from Chute"))
    }

    @Test func maxFrameRateDropsFramesAndNeverFillsAGap() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("gap.mkv")
        // 3 s at 50 fps with the second in the middle cut out, timestamps kept: 100 frames over 3 s.
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=50:duration=3",
            "-vf", "select='not(between(t,1,1.999))'", "-fps_mode", "vfr", "-c:v", "libx264", "-preset", "ultrafast",
            input.string,
        ])
        func frames(_ path: FilePath) throws -> Int? {
            Int(try MediaFixtures.entries("stream=nb_read_frames", of: path, counting: true))
        }
        try #require(try frames(input) == 100)

        let report = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("out.mp4"),
            options: ConversionOptions(["maxFrameRate": 25])
        )

        // Every other frame dropped: 2 s of pictures at 25 fps, plus the last frame of each run, which rounds onto a
        // tick of its own (t = 0.98 s is tick 24.5, rounded up to 25): 26 + 26. Filling the gap, as FFmpeg's fps
        // filter does, would give 75.
        let output = try #require(try frames(directory.appending("out.mp4")))
        #expect((50...52).contains(output), "\(output) frames")
        #expect(report.details["mode"] == "transcode")
        let probe = try MediaFixtures.probe(directory.appending("out.mp4"))
        #expect(abs(try #require(probe.duration) - 3) < 0.1)
    }

    @Test func tagsOnAnOggStreamReachAnMP3() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.ogg")
        try MediaFixtures.makeClip(
            at: input,
            width: nil,
            seconds: 2,
            sampleRate: 44100,
            codecArguments: ["-metadata", "title=Stream Title", "-metadata", "album=Ogg Album", "-c:a", "libvorbis"]
        )
        // Vorbis comments live on the stream, not the container.
        let inputProbe = try MediaFixtures.probe(input)
        try #require(inputProbe.tags["title"] == nil)
        try #require(inputProbe.streams("audio").first?["tags"] as? [String: String] != nil)

        _ = try Conversion.run(input, to: "mp3", output: directory.appending("out.mp3"))

        let tags = try MediaFixtures.probe(directory.appending("out.mp3")).tags
        #expect(tags["title"] == "Stream Title")
        #expect(tags["album"] == "Ogg Album")
    }

    @Test func anEmptySubtitleTrackIsAWarningNotAFailure() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let subtitles = directory.appending("late.srt")
        let input = directory.appending("in.mkv")
        // The only cue starts after the 2 s film ends, so the muxed subtitle track holds no packet.
        try "1\n00:00:30,000 --> 00:00:31,000\nToo late\n\n".write(
            toFile: subtitles.string,
            atomically: true,
            encoding: .utf8
        )
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
            "-i", subtitles.string, "-t", "2", "-c:v", "libx264", "-preset", "ultrafast", "-c:s", "srt", input.string,
        ])
        try #require(try MediaFixtures.packetSizes(of: input, stream: "s:0").isEmpty)
        try #require(try MediaFixtures.probe(input).streams("subtitle").count == 1)

        let report = try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4"))

        #expect(report.warnings.contains { $0.contains("subrip") && $0.contains("empty") }, "\(report.warnings)")
        #expect(try MediaFixtures.probe(directory.appending("out.mp4")).streams("video").count == 1)
    }

    @Test func mkvWithAACOfUnknownBitrateIsRemuxedToMP4() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try MediaFixtures.makeClip(at: input, seconds: 2, codecArguments: MediaFixtures.h264AAC)
        // Matroska records no audio bitrate.
        let audio = try #require(try MediaFixtures.probe(input).streams("audio").first)
        try #require(audio["bit_rate"] == nil)

        let report = try Conversion.run(input, to: "mp4", output: directory.appending("out.mp4"))

        #expect(report.details["mode"] == "remux")
        #expect(
            try MediaFixtures.packetSizes(of: directory.appending("out.mp4"), stream: "a:0")
                == MediaFixtures.packetSizes(of: input, stream: "a:0")
        )
    }

    @Test func everyAudioStreamIsKeptOnlyWhenAsked() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mkv")
        try CommandLineTool.run([
            "ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2",
            "-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-f", "lavfi", "-i", "sine=frequency=880:duration=2",
            "-map", "0", "-map", "1", "-map", "2", "-c:v", "libx264", "-c:a", "aac", input.string,
        ])

        _ = try Conversion.run(input, to: "mp4", output: directory.appending("one.mp4"))
        _ = try Conversion.run(
            input,
            to: "mp4",
            output: directory.appending("all.mp4"),
            options: ConversionOptions(["allAudio": true])
        )

        #expect(try MediaFixtures.probe(directory.appending("one.mp4")).streams("audio").count == 1)
        #expect(try MediaFixtures.probe(directory.appending("all.mp4")).streams("audio").count == 2)
    }

    @Test(arguments: [("m4a", "aac"), ("opus", "opus"), ("ogg", "vorbis"), ("flac", "flac"), ("wav", "pcm_s16le")])
    func audioTargetsGetTheirCodec(target: String, codec: String) throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp3")
        let output = directory.appending("out.\(target)")
        try MediaFixtures.makeClip(
            at: input,
            width: nil,
            seconds: 2,
            sampleRate: 44100,
            codecArguments: ["-c:a", "libmp3lame"]
        )

        _ = try Conversion.run(input, to: target, output: output)

        let probe = try MediaFixtures.probe(output)
        #expect(probe.streams("audio").first?["codec_name"] as? String == codec)
        #expect(abs(try #require(probe.duration) - 2) < 0.1)
    }

    @Test func webmGetsVP9AndOpus() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.mp4")
        let output = directory.appending("out.webm")
        try MediaFixtures.makeClip(
            at: input,
            width: 160,
            height: 120,
            seconds: 1,
            codecArguments: ["-c:v", "libx264", "-c:a", "aac"]
        )

        _ = try Conversion.run(input, to: "webm", output: output)

        let probe = try MediaFixtures.probe(output)
        #expect(probe.streams("video").first?["codec_name"] as? String == "vp9")
        #expect(probe.streams("audio").first?["codec_name"] as? String == "opus")
    }

    @Test func anExistingOutputIsNeverOverwritten() throws {
        let directory = try TemporaryDirectory(prefix: "media")
        defer { directory.remove() }
        let input = directory.appending("in.wav")
        let output = directory.appending("out.mp3")
        try MediaFixtures.makeClip(at: input, width: nil, seconds: 1, codecArguments: ["-c:a", "pcm_s16le"])
        try "someone else's".write(toFile: output.string, atomically: true, encoding: .utf8)

        #expect(throws: ConversionFailure(.outputFailed, "output already exists")) {
            try Conversion.run(input, to: "mp3", output: output)
        }
        #expect(try String(contentsOfFile: output.string, encoding: .utf8) == "someone else's")
    }

    @Test func librariesNameFFmpegAndItsParts() {
        let libraries = MediaEngine(kind: .video).libraries
        #expect(libraries["libavformat"]?.hasPrefix("59.") == true)
        #expect(libraries["libavcodec"] != nil)
        #expect(libraries["libavfilter"] != nil)
        #expect(libraries["FFmpeg"]?.isEmpty == false)
    }
}
