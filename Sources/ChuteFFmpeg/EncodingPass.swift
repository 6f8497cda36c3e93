import CFFmpeg
import ChuteCore
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One pass of a two-pass video encode at a set bitrate, which `maxFileSize` asks for: the first pass analyses the
/// video and writes libx264's statistics, the second encodes it with them, so that the average bitrate, and the
/// file's size, land where asked.
enum EncodingPass: Sendable {
    /// Analyse, writing the statistics to `statsFile`. The corresponding C flag is `AV_CODEC_FLAG_PASS1`.
    case first(statsFile: String, bitRate: Int)
    /// Encode, reading the statistics. The corresponding C flag is `AV_CODEC_FLAG_PASS2`.
    case second(statsFile: String, bitRate: Int)

    var statsFile: String {
        switch self {
        case .first(let file, _), .second(let file, _): file
        }
    }

    var bitRate: Int {
        switch self {
        case .first(_, let rate), .second(_, let rate): rate
        }
    }

    /// The share of `maxFileSize` that a two-pass encode aims at: x264's second pass lands within about 1 % of its
    /// bitrate, and the estimate of the audio and the container within a little more, so aiming 2.5 % under keeps the
    /// file under the limit and within 5 % of it.
    static let aim = 0.975

    /// The bytes a container spends per packet beyond the packet's data (MP4's sample tables, Matroska's block
    /// headers), and once for its headers.
    static let bytesPerPacket = 16.0
    static let headerBytes = 8192.0

    /// The video bitrate that makes a file of `maxFileSize` bytes: its ``aim`` in bits, less the audio's bits and the
    /// container's overhead, spread over the duration.
    ///
    /// - Parameters:
    ///   - maxFileSize: the rule's limit in bytes.
    ///   - duration: the video's length in seconds.
    ///   - frameRate: the output's frames per second.
    ///   - audio: each audio stream's bits per second, and its packets per second.
    /// - Returns: bits per second.
    /// - Throws: ``FFmpegError`` with code `limitExceeded` when the audio and overhead alone fill the size.
    static func videoBitRate(
        maxFileSize: Int,
        duration: Double,
        frameRate: Double,
        audio: [(bitRate: Int, packetsPerSecond: Double)]
    ) throws(FFmpegError) -> Int {
        let packets = (frameRate + audio.map(\.packetsPerSecond).reduce(0, +)) * duration
        let overhead = Self.headerBytes + packets * Self.bytesPerPacket
        let audioBytes = Double(audio.map(\.bitRate).reduce(0, +)) * duration / 8
        let videoBytes = Double(maxFileSize) * Self.aim - audioBytes - overhead
        let bitRate = Int(videoBytes * 8 / duration)
        // x264's least useful rate; below it the size is better spent otherwise (a lower audioBitrate, a height).
        guard bitRate >= 16_000 else {
            throw FFmpegError(
                .limitExceeded,
                "maxFileSize",
                detail:
                    "\(ValueParsing.describe(bytes: Int64(maxFileSize))) cannot hold \(OutputVerifier.seconds(duration)) "
                    + "of video: the audio takes \(ValueParsing.describe(bytes: Int64(audioBytes))) and the container "
                    + "\(ValueParsing.describe(bytes: Int64(overhead)))"
            )
        }
        return bitRate
    }

    /// Runs the first pass over the video of `input` into FFmpeg's `null` muxer, writing libx264's statistics.
    ///
    /// The encoder is freed before this returns, which is when libx264 finishes its statistics file.
    ///
    /// - Parameters:
    ///   - plan: the conversion's plan; only its video is read.
    ///   - trim: the part of the input the output keeps, as the second pass reads it.
    ///   - statsFile: where libx264 writes its statistics (and `.mbtree` beside it).
    ///   - scratch: the path of an empty file the `null` muxer is opened on (it writes nothing), removed after.
    /// - Throws: ``FFmpegError`` as a conversion does.
    static func analyse(
        _ plan: ConversionPlan,
        options: ConversionOptions,
        trim: TrimWindow?,
        input: MediaFile,
        statsFile: String,
        bitRate: Int,
        scratch: FilePath
    ) throws(FFmpegError) {
        var videoOnly = plan
        videoOnly.audio = []
        videoOnly.subtitles = []
        videoOnly.covers = []
        let container = try InputContainer(file: input)
        let sink: MediaFile
        do {
            sink = try MediaFile.create(at: scratch)
        } catch {
            throw FFmpegError(.writeOutput, "open", detail: error.message)
        }
        let muxer = try OutputContainer(file: sink, muxer: "null", fileExtension: "null")
        var transcoder = try Transcoder(
            plan: videoOnly,
            options: options,
            trim: trim,
            input: container,
            output: muxer,
            pass: .first(statsFile: statsFile, bitRate: bitRate)
        )
        try muxer.writeHeader()
        var meter = ProgressMeter(interval: .seconds(3600))
        _ = try transcoder.run(input: container, output: muxer, inputSize: input.size, trim: trim, meter: &meter) { _ in
        }
        try muxer.finish()
    }

    /// Removes the statistics files of a two-pass encode: the file, libx264's macroblock-tree file beside it, and
    /// their temporary names.
    static func removeStats(_ statsFile: String) {
        for suffix in ["", ".temp", ".mbtree", ".mbtree.temp"] {
            _ = unlink(statsFile + suffix)
        }
    }
}
