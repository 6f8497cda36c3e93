import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteFFmpeg
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Every video and audio format of the issue is written by the media engine from one generated clip, then read back
/// by the `ffmpeg` tools: `ffprobe` finds the codecs and picture size Chute promises, the whole file decodes without
/// a message, and its packets span the clip's 2 s (±0.1 s). The table of results is printed, with the picture size
/// `ffprobe` found.
///
/// Serialized because FFmpeg's log is process-wide (see ``MediaEngineTests``).
@Suite(.serialized, .timeLimit(.minutes(5)))
struct MediaFormatsTests {
    /// The 21 video formats, with the video and audio codecs each gets from a clip in neither.
    static let videoFormats: [(name: String, video: String, audio: String)] = [
        ("mp4", "h264", "aac"), ("amv", "amv", "adpcm_ima_amv"), ("avi", "mpeg4", "mp3"), ("mov", "h264", "aac"),
        ("mpg", "mpeg1video", "mp2"), ("m4v", "h264", "aac"), ("mkv", "h264", "aac"), ("wmv", "wmv2", "wmav2"),
        ("flv", "h264", "aac"), ("mpeg", "mpeg1video", "mp2"), ("rm", "rv10", "ac3"), ("vob", "mpeg2video", "ac3"),
        ("ts", "h264", "aac"), ("webm", "vp9", "opus"), ("asf", "wmv2", "wmav2"), ("3gp", "h264", "aac"),
        ("swf", "flv1", "mp3"), ("mxf", "mpeg2video", "pcm_s16le"), ("f4v", "h264", "aac"), ("3g2", "h264", "aac"),
        ("ogv", "theora", "vorbis"),
    ]

    /// The 23 audio formats, with the codec each holds.
    static let audioFormats: [(name: String, audio: String)] = [
        ("mp3", "mp3"), ("wav", "pcm_s16le"), ("flac", "flac"), ("m4a", "aac"), ("aac", "aac"), ("ogg", "vorbis"),
        ("ac3", "ac3"), ("wma", "wmav2"), ("amr", "amr_nb"), ("opus", "opus"), ("aiff", "pcm_s16be"), ("mp2", "mp2"),
        ("gsm", "gsm"), ("dts", "dts"), ("au", "pcm_s16be"), ("caf", "pcm_s16be"), ("wv", "wavpack"),
        ("oga", "flac"), ("w64", "pcm_s16le"), ("voc", "pcm_s16le"), ("snd", "pcm_s16be"), ("spx", "speex"),
        ("ircam", "pcm_s16le"),
    ]

    /// The source clip: 2 s of a 320x180 test pattern at 25 fps in Motion JPEG, with a 440 Hz tone in 16-bit PCM at
    /// 44.1 kHz, stereo: no target holds Motion JPEG, so every video is encoded, and only a few audio targets can
    /// copy the PCM.
    static let seconds = 2.0
    static let width = 320
    static let height = 180

    /// One line of the printed table.
    private struct Row {
        var format: String
        var muxer: String
        var codecs = ""
        /// The video's width and height as `ffprobe` reads them, or `-`.
        var picture = "-"
        var duration = ""
        var size = ""
        /// What Chute's own sniffing makes of the output as an input (``MediaType``), or `-`.
        var sniffed = "-"
        var problems: [String] = []
    }

    @Test func everyVideoAndAudioFormatIsWrittenAndReadsBack() throws {
        #expect(Self.videoFormats.count == 21 && Self.audioFormats.count == 23)
        let directory = try TemporaryDirectory(prefix: "formats")
        defer { directory.remove() }
        let input = directory.appending("source.mkv")
        try MediaFixtures.makeClip(
            at: input,
            width: Self.width,
            height: Self.height,
            seconds: Self.seconds,
            rate: 25,
            sampleRate: 44100,
            codecArguments: ["-c:v", "mjpeg", "-c:a", "pcm_s16le"]
        )

        var rows: [Row] = []
        for (name, video, audio) in Self.videoFormats {
            // AMV and RealVideo take multiples of 16: 180 becomes the nearest, 176.
            let height = name == "amv" || name == "rm" ? 176 : Self.height
            rows.append(
                Self.check(name, from: input, in: directory, video: (video, Self.width, height), audio: audio)
            )
        }
        for (name, audio) in Self.audioFormats {
            rows.append(Self.check(name, from: input, in: directory, video: nil, audio: audio))
        }

        print(Self.table(rows))
        let failed = rows.filter { !$0.problems.isEmpty }
        #expect(failed.isEmpty, "\(failed.map { "\($0.format): \($0.problems.joined(separator: "; "))" })")
    }

    /// `audioBitrate` picks the AMR mode: the highest at or below it. Each frame's table-of-contents byte names the
    /// mode (RFC 4867 §5.3: bits 3–6), and the frames are its size: 7.95k is mode 5, 20 bytes of speech and the byte.
    @Test(arguments: [(nil as Int?, 7, 32), (8000, 5, 21), (12_000, 6, 27)])
    func amrModeComesFromTheBitrate(bitRate: Int?, mode: UInt8, frameBytes: Int) throws {
        let directory = try TemporaryDirectory(prefix: "amr")
        defer { directory.remove() }
        let input = directory.appending("voice.wav")
        let output = directory.appending("voice.amr")
        try MediaFixtures.makeClip(at: input, width: nil, seconds: 1, codecArguments: ["-c:a", "pcm_s16le"])
        let options = bitRate.map { ConversionOptions(["audioBitrate": .integer($0)]) } ?? ConversionOptions()

        _ = try Conversion.run(input, to: "amr", output: output, options: options)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: output.string))
        #expect(bytes.prefix(6) == Data("#!AMR\n".utf8))
        let frames = bytes.dropFirst(6)
        // 1 s is 50 frames of 20 ms (the resampler may leave a few samples over, padded into one more).
        #expect(frames.count % frameBytes == 0 && (50...51).contains(frames.count / frameBytes))
        #expect(frames.first.map { ($0 >> 3) & 0x0F } == mode)
    }

    /// MPEG program streams take standard frame rates only: the nearest is used (15 fps becomes 23.976), but never
    /// one above the rule's `maxFrameRate` (29 makes 30 fps 25, not 29.97).
    @Test(arguments: [(15, nil as Double?, "24000/1001"), (30, 29, "25/1"), (30, nil, "30/1")])
    func mpegTakesTheNearestStandardFrameRateWithinTheCap(rate: Int, cap: Double?, expected: String) throws {
        let directory = try TemporaryDirectory(prefix: "mpg")
        defer { directory.remove() }
        let input = directory.appending("clip.mkv")
        let output = directory.appending("clip.mpg")
        try MediaFixtures.makeClip(at: input, seconds: 2, rate: rate, codecArguments: MediaFixtures.h264AAC)
        let options = cap.map { ConversionOptions(["maxFrameRate": .number($0)]) } ?? ConversionOptions()

        _ = try Conversion.run(input, to: "mpg", output: output, options: options)

        let probe = try MediaFixtures.probe(output)
        #expect(probe.streams("video").first?["r_frame_rate"] as? String == expected)
    }

    /// Converts the clip to `format` and checks the output; the row lists what did not hold.
    private static func check(
        _ format: String,
        from input: FilePath,
        in directory: TemporaryDirectory,
        video: (codec: String, width: Int, height: Int)?,
        audio: String
    ) -> Row {
        let target = Engines.registry.format(named: format)
        var row = Row(format: format, muxer: target?.coder ?? "-")
        let output = directory.appending("out.\(format)")
        do {
            _ = try Conversion.run(input, to: format, output: output)
            let probe = try MediaFixtures.probe(output)
            let videos = probe.streams("video")
            let audios = probe.streams("audio")
            row.codecs = (videos + audios).compactMap { $0["codec_name"] as? String }.joined(separator: "+")
            if let video {
                let found = videos.first.map {
                    ($0["codec_name"] as? String, $0["width"] as? Int, $0["height"] as? Int)
                }
                row.picture = "\(found?.1 ?? 0)x\(found?.2 ?? 0)"
                if videos.count != 1 || found?.0 != video.codec || found?.1 != video.width || found?.2 != video.height {
                    let size = "\(found?.1 ?? 0)x\(found?.2 ?? 0)"
                    row.problems.append(
                        "video is \(found?.0 ?? "missing") \(size), not \(video.codec) \(video.width)x\(video.height)"
                    )
                }
            } else if !videos.isEmpty {
                row.problems.append("an audio format holds a video stream")
            }
            if audios.count != 1 || audios.first?["codec_name"] as? String != audio {
                row.problems.append("audio is \(audios.first?["codec_name"] as? String ?? "missing"), not \(audio)")
            }
            let decoding = try CommandLineTool.run(
                ["ffmpeg", "-nostdin", "-v", "error", "-i", output.string, "-f", "null", "-"],
                check: false
            )
            let messages = decoding.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
            if decoding.status != 0 || !messages.isEmpty {
                row.problems.append("decoding printed: \(messages.prefix(300))")
            }
            let span = try Self.span(of: output)
            row.duration = String(format: "%.3f s", span)
            if abs(span - Self.seconds) > 0.1 {
                row.problems.append("lasts \(row.duration), not \(Self.seconds) s ± 0.1")
            }
            let bytes = try FileManager.default.attributesOfItem(atPath: output.string)[.size] as? Int ?? 0
            row.size = "\(bytes) B"
            let header = try Data(contentsOf: URL(fileURLWithPath: output.string)).prefix(MediaType.headerLength)
            row.sniffed = MediaType.sniff(header)?.rawValue ?? "-"
        } catch {
            row.problems.append("\(error)")
        }
        return row
    }

    /// How long the file's packets last, from the first one's start to the last one's end, as `ffprobe` reads them
    /// (some containers, SWF and AMV, declare no duration).
    private static func span(of path: FilePath) throws -> Double {
        let packets = try CommandLineTool.run([
            "ffprobe", "-v", "error", "-show_entries", "packet=pts_time,dts_time,duration_time", "-of", "csv=p=0",
            path.string,
        ]).standardOutput
        var start = Double.infinity
        var end = -Double.infinity
        for line in packets.split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { Double($0) }
            guard fields.count >= 3, let time = fields[0] ?? fields[1] else { continue }
            start = min(start, time)
            end = max(end, time + (fields[2] ?? 0))
        }
        return end > start ? end - start : 0
    }

    /// The rows as a Markdown table.
    private static func table(_ rows: [Row]) -> String {
        var lines = [
            "| format | muxer | codecs | picture | duration | size | sniffed as | result |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for row in rows {
            let result = row.problems.isEmpty ? "OK" : "FAIL: " + row.problems.joined(separator: "; ")
            lines.append(
                "| \(row.format) | \(row.muxer) | \(row.codecs) | \(row.picture) | \(row.duration) | \(row.size) "
                    + "| \(row.sniffed) | \(result) |"
            )
        }
        return lines.joined(separator: "\n")
    }
}
