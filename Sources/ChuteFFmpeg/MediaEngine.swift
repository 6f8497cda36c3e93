import CFFmpeg
import ChuteCatalog
import ChuteCore
import SystemPackage

/// The media engine: converts video and audio in-process with FFmpeg's libraries (libavformat, libavcodec,
/// libavfilter).
///
/// A conversion opens the input through one descriptor and decides from its first bytes (``MediaType``) whether it
/// is video or audio at all: playlists, manifests, scripts, SVG and text never reach a demuxer. The input is then
/// opened with an allowlist of demuxers and no way to reach another file (``InputContainer``). The plan
/// (``ConversionPlan``) keeps the main video stream (video targets), the main audio stream (or all of them, with
/// `allAudio`), text subtitles where the target holds them and cover pictures where an audio target holds them;
/// it copies each stream that already satisfies the rule and re-encodes the others. The output is created
/// exclusively, written, read back and checked (``OutputVerifier``), flushed to storage, and only then reported.
///
/// Rotation: MP4 and MOV keep the source's display matrix, so a portrait phone clip stays portrait whether it is
/// copied or scaled (the box applies to the picture as shown). Matroska and WebM cannot store the matrix in FFmpeg
/// 5.1, so for them the pixels are turned instead.
///
/// Durations: an input whose streams end well before the duration its header declares is truncated and fails
/// (`corruptInput`), except when the header's duration is over a day, which fragmented MP4s use to mean
/// "unknown". The output must last as long as the input's kept streams, within the larger of 0.5 s and 2 %.
///
/// - Important: ``convert(_:progress:)`` blocks in C code; call it on a worker's own thread. The first use sets up
///   FFmpeg's logging for the whole process (``FFmpegLibrary``). A worker runs one conversion at a time, which is
///   what lets the FFmpeg messages logged during a job go into that job's warnings.
package struct MediaEngine: ConversionEngine {
    /// The declared durations beyond which a header's value is not trusted, in seconds.
    static let implausibleDuration = 86_400.0

    package let kind: EngineKind
    /// The least time between two progress reports.
    let progressInterval: Duration

    /// Creates the engine for a lane.
    ///
    /// - Parameters:
    ///   - kind: `.video` or `.audio`. Either engine converts to any video or audio target (audio is extracted from
    ///     videos by the audio lane); the kind only names the lane the engine serves.
    ///   - threadsPerJob: the threads its codecs and filters may use (the daemon's CPU budget for a job of the lane),
    ///     or 0 to let FFmpeg choose, as the `ffmpeg` CLI does; `nil` leaves the process's setting as it is.
    ///   - progressInterval: the least time between two progress reports (one a second by default, which is what
    ///     the supervisor's log needs; tests pass zero to see every report).
    package init(kind: EngineKind, threadsPerJob: Int? = nil, progressInterval: Duration = .seconds(1)) {
        precondition(kind == .video || kind == .audio, "the media engine serves the video and audio lanes")
        if let threadsPerJob {
            CodecThreads.set(threadsPerJob)
        }
        self.kind = kind
        self.progressInterval = progressInterval
    }

    /// `FFmpeg` with its release, and each library's version (`libavformat`, `libavcodec`, `libavfilter`,
    /// `libavutil`, `libswscale`, `libswresample`).
    package var libraries: [String: String] {
        FFmpegLibrary.shared.versions
    }

    /// Converts `request.input` into `request.output`, or joins a group's clips (`request.inputs`) into it
    /// (``concatenate(_:request:progress:)``, whose report says `mode: joined` or `joined (re-encoded)`).
    ///
    /// Options: `width`, `height` and `upscale` bound the video; `videoCodec`, `crf` or `videoBitrate`, `preset`
    /// and `maxFrameRate` set its encoding; `audioCodec`, `audioBitrate`, `channels` and `sampleRate` set the
    /// audio's; `allAudio` keeps every audio stream. The defaults are listed in `docs/rules.md`.
    ///
    /// - Parameters:
    ///   - request: the job; `output` must not exist.
    ///   - progress: called about once a second (the engine's `progressInterval`) while the job runs, and with 1 at
    ///     the end.
    /// - Returns: the output's size, warnings (concealed decoding errors, dropped subtitles, FFmpeg's own warnings)
    ///   and details: `mode` (`remux` or `transcode`), the input's and output's codecs, sizes and durations,
    ///   `frames`, `speed` and how the output was verified.
    /// - Throws: ``ConversionFailure`` carrying FFmpeg's message where it gave one; the output file is removed (or
    ///   was never created).
    package func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        _ = FFmpegLibrary.shared
        if let threads = request.threads {
            // The scheduler's choice for this job (every core for a job that started alone); one job at a time runs
            // in a worker, so the process-wide count is this job's.
            CodecThreads.set(threads)
        }
        // Anything logged before this job (a previous one's last words) is not this job's.
        _ = FFmpegLog.takeMessages()
        // A group's clips are joined into one file (``concatenate(_:request:progress:)``).
        if let inputs = request.inputs {
            return try self.concatenate(inputs, request: request, progress: progress)
        }
        // A picture is written from a video only: a poster frame or a sticker (``FrameWriter``).
        let writesFrames = request.format.category == .image && MediaOptions.frameFormats.contains(request.format.name)
        guard request.format.category == .video || request.format.category == .audio || writesFrames else {
            throw ConversionFailure(.internalError, "the media engine does not write \(request.format.name)")
        }
        let input = try MediaFile.open(reading: request)
        guard input.size > 0 else { throw ConversionFailure(.corruptInput, "empty file") }
        guard let type = MediaType.sniff(input.header(count: 512)) else {
            throw ConversionFailure(.unsupportedInput, "the content is not in a video or audio format Chute recognises")
        }
        if writesFrames && type.category != .video {
            throw ConversionFailure(
                .unsupportedInput,
                "the content is \(type.rawValue), not video; the video engine writes \(request.format.name) from videos"
            )
        }
        guard type.category == .video || type.category == .audio else {
            let kind = type.category.map { "\($0.rawValue) content" } ?? "refused for safety"
            throw ConversionFailure(
                .unsupportedInput,
                "the content is \(type.rawValue) (\(kind)), not video or audio; it was not opened"
            )
        }
        let output = try MediaFile.create(at: request.output)
        var report: ConversionReport
        do {
            if writesFrames {
                report = try FrameWriter.write(request, input: input, output: output)
            } else {
                var meter = ProgressMeter(interval: self.progressInterval)
                report = try Self.run(request, input: input, output: output, meter: &meter, progress: progress)
            }
        } catch {
            throw error.conversionFailure
        }
        try output.keep()
        report.outputBytes = output.currentSize ?? 0
        progress(JobProgress(fraction: 1))
        return report
    }

    /// Plans, writes and verifies the output; with `conformance`, every kept stream is re-encoded to that shape
    /// (a clip of a group whose clips differ).
    static func run(
        _ request: ConversionRequest,
        input: MediaFile,
        output: MediaFile,
        conformance: Conformance? = nil,
        meter: inout ProgressMeter,
        progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> ConversionReport {
        let clock = ContinuousClock()
        let started = clock.now
        let container = try InputContainer(file: input)
        let sources = (0..<container.streamCount).map { SourceStream(container.stream(at: $0)) }
        try Self.checkLimits(request.limits, sources: sources, declaredDuration: container.declaredDuration)
        let bestVideo = av_find_best_stream(container.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        let bestAudio = av_find_best_stream(container.context, AVMEDIA_TYPE_AUDIO, -1, max(-1, bestVideo), nil, 0)

        let muxer = try OutputContainer(file: output, muxer: request.format.coder, fileExtension: request.format.name)
        var plan = try ConversionPlan(
            sources: sources,
            inputFormat: container.formatName,
            bestVideo: bestVideo >= 0 ? Int(bestVideo) : nil,
            bestAudio: bestAudio >= 0 ? Int(bestAudio) : nil,
            format: request.format,
            muxer: muxer.muxer,
            options: request.options
        )
        try plan.applySound(request.options, input: input)
        if let conformance {
            plan.conform(to: conformance)
        }
        let trim = try TrimWindow(options: request.options, plan: plan, input: container)
        let twoPass = try Self.firstPass(request, plan: plan, container: container, input: input, trim: trim)
        defer {
            if let twoPass { EncodingPass.removeStats(twoPass.statsFile) }
        }
        let transcoded = try Self.transcode(
            request,
            plan: plan,
            trim: trim,
            pass: twoPass,
            input: container,
            inputSize: input.size,
            output: muxer,
            meter: &meter,
            progress: progress
        )
        var warnings = plan.warnings + transcoded.warnings
        var details: [String: String] = [:]
        if let limit = request.options[CommonOptions.maxFileSize], let twoPass, let size = output.currentSize,
            size > Int64(limit)
        {
            throw FFmpegError(
                .limitExceeded,
                "maxFileSize",
                detail: "two passes at \(ValueParsing.describe(bitrate: twoPass.bitRate)) made "
                    + "\(ValueParsing.describe(bytes: size)), over the rule's maxFileSize of "
                    + "\(ValueParsing.describe(bytes: Int64(limit))) (at so low a bitrate the encoder may be at its "
                    + "coarsest quality already: a smaller height, or a slower preset, fits more in it)"
            )
        }
        if trim == nil {
            // A trimmed input is read only up to a little past the end, so its streams' ends are not measured.
            try Self.checkComplete(container, extents: transcoded.extents)
        }
        warnings += FFmpegLog.takeMessages()

        var kept = TimeExtent()
        for source in [plan.video?.source].compactMap({ $0 }) + plan.audio.map(\.source) {
            kept.include(transcoded.extents[source.index] ?? TimeExtent())
        }
        if let trim {
            kept = kept.clamped(from: 0, to: trim.length)
        }
        let verification = try OutputVerifier.verify(
            output,
            demuxer: plan.profile.demuxer,
            // `speed` divides the picture's and the sound's times.
            expectedDuration: kept.length.map { $0 / (request.options[MediaOptions.speed] ?? 1) },
            copiedStreams: transcoded.copiedStreams,
            meter: &meter,
            progress: progress
        )
        // Decoding the output from a seek point makes decoders warn about the references before it; the checks
        // above judged the output, so those messages are not the job's.
        _ = FFmpegLog.takeMessages()
        if transcoded.repairedTimestamps > 0 {
            warnings.append("\(transcoded.repairedTimestamps) packets had invalid timestamps, which were repaired")
        }
        if let twoPass {
            details["passes"] = "2"
            details["videoBitrate"] = ValueParsing.describe(bitrate: twoPass.bitRate)
        }

        let elapsed = clock.now - started
        var report = ConversionReport(outputBytes: 0, warnings: warnings)
        report.captured = container.captureTime
        report.details = Self.details(
            plan: plan,
            transcoded: transcoded.details,
            container: container,
            inputDuration: kept.length,
            trim: trim,
            verification: verification,
            elapsed: elapsed
        ).merging(details) { _, new in new }
        return report
    }

    /// What a written output leaves for the checks, the read-back and the report once its decoders, filter graphs
    /// and encoders are freed.
    private struct Transcoded {
        var warnings: [String]
        /// The span of each input audio and video stream, by input index.
        var extents: [Int: TimeExtent]
        /// The output streams whose packets were copied.
        var copiedStreams: Set<Int32>
        var repairedTimestamps: Int
        /// The output's codecs and frame counts, for the report.
        var details: [String: String]
    }

    /// Writes the output: its header, each kept stream's packets, copied or re-encoded, and its trailer.
    ///
    /// The decoders, filter graphs and encoders are freed when it returns, before the output is read back: a 1080p
    /// x264 encode holds some 300 MB, which the read-back's decoders would add to (20 MB more at the end of a
    /// 720p transcode, measured).
    private static func transcode(
        _ request: ConversionRequest,
        plan: ConversionPlan,
        trim: TrimWindow?,
        pass: EncodingPass?,
        input container: borrowing InputContainer,
        inputSize: Int64,
        output muxer: consuming OutputContainer,
        meter: inout ProgressMeter,
        progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> Transcoded {
        var transcoder = try Transcoder(
            plan: plan,
            options: request.options,
            trim: trim,
            input: container,
            output: muxer,
            pass: pass
        )
        muxer.copyTags(from: container, stream: plan.profile.isVideo ? nil : plan.audio.first?.source.index)
        muxer.applyMetadataPolicy(CommonOptions.metadataPolicy(in: request.options))
        try muxer.writeHeader()
        let warnings = try transcoder.run(
            input: container,
            output: muxer,
            inputSize: inputSize,
            trim: trim,
            meter: &meter,
            progress: progress
        )
        let repaired = muxer.repairedTimestamps
        if let trim, let video = plan.video,
            (transcoder.videoTranscoder?.framesEncoded ?? transcoder.copiedPackets(of: video.source) ?? 0) == 0
        {
            // A muxer leaves an empty track out, so the read-back would find a sound-only file and pass it.
            let end = trim.length.map { " to \(OutputVerifier.seconds(trim.startSeconds + $0))" } ?? ""
            throw FFmpegError(
                .unsupportedStream,
                "start",
                detail: "the rule's trim (from \(OutputVerifier.seconds(trim.startSeconds))\(end)) keeps no frame of "
                    + "the video: its pictures end before the start"
            )
        }
        if trim == nil {
            // A copied stream is not decoded, so an input that holds none of its packets (an MP4 cut off right after
            // its index, which declares every sample) is told here, not by the read-back finding an empty output.
            for source in [plan.video?.source].compactMap({ $0 }) + plan.audio.map(\.source)
            where transcoder.copiedPackets(of: source) == 0 {
                let declared = container.declaredDuration.map {
                    ", though its header declares \(OutputVerifier.seconds($0))"
                }
                throw FFmpegError(
                    .decode,
                    "av_read_frame",
                    detail: "the input holds no readable packet of stream #\(source.index) (\(source.codecName))"
                        + "\(declared ?? ""): it is truncated or damaged"
                )
            }
        }
        try muxer.finish()
        return Transcoded(
            warnings: warnings,
            extents: transcoder.extents,
            copiedStreams: Set(transcoder.copiedPackets.keys),
            repairedTimestamps: repaired,
            details: Self.outputDetails(plan: plan, transcoder: transcoder)
        )
    }

    /// The output's video and audio as the transcoder wrote them: codecs, sizes, frames.
    private static func outputDetails(plan: ConversionPlan, transcoder: Transcoder) -> [String: String] {
        var details: [String: String] = [:]
        if let video = plan.video {
            if let encoded = transcoder.videoTranscoder {
                details["outputVideo"] = encoded.outputSummary
                details["frames"] = String(encoded.framesEncoded)
                if encoded.framesDropped > 0 {
                    details["framesDropped"] = String(encoded.framesDropped)
                }
            } else {
                details["outputVideo"] = "\(video.source.codecName) \(video.width)x\(video.height) (copied)"
                details["frames"] = transcoder.copiedPackets(of: video.source).map(String.init)
            }
        }
        if !plan.audio.isEmpty {
            let outputs = plan.audio.map { audio in
                audio.isCopy
                    ? "\(audio.source.summary) (copied)"
                    : transcoder.transcoders.first { $0.tally.streamIndex == audio.source.index }?.outputSummary ?? ""
            }
            details["outputAudio"] = outputs.joined(separator: "; ")
        }
        return details
    }

    /// With `maxFileSize`, computes the video bitrate that fills the size and runs the first of two passes.
    ///
    /// - Returns: the second pass, or `nil` when the rule has no `maxFileSize` or the video is copied.
    private static func firstPass(
        _ request: ConversionRequest,
        plan: ConversionPlan,
        container: borrowing InputContainer,
        input: MediaFile,
        trim: TrimWindow?
    ) throws(FFmpegError) -> EncodingPass? {
        guard let limit = request.options[CommonOptions.maxFileSize], let video = plan.video, !video.isCopy else {
            return nil
        }
        guard let declared = container.declaredDuration, declared < Self.implausibleDuration else {
            throw FFmpegError(
                .unsupportedStream,
                "maxFileSize",
                detail: "the input does not declare its duration, which the bitrate for maxFileSize is computed from"
            )
        }
        // The output lasts what the trim keeps of the input, played at the rule's speed.
        let kept = min(trim?.length ?? .infinity, declared - (trim?.startSeconds ?? 0))
        let duration = kept / (request.options[MediaOptions.speed] ?? 1)
        let sourceRate = video.source.frameRate ?? 25
        let audio = plan.audio.map { audio in
            (
                bitRate: audio.isCopy ? audio.source.bitRate : audio.bitRate ?? audio.source.bitRate,
                // AAC's frames hold 1024 samples, MP3's 1152, Opus's 960: 1024 estimates them all.
                packetsPerSecond: Double(audio.sampleRate ?? audio.source.sampleRate) / 1024
            )
        }
        let bitRate = try EncodingPass.videoBitRate(
            maxFileSize: limit,
            duration: duration,
            frameRate: video.maxFrameRate.map { min($0, sourceRate) } ?? sourceRate,
            audio: audio
        )
        // Named after the temporary output, so that the supervisor's clean-up of a failed job removes it too.
        let statsFile = request.output.string + "-x264.log"
        do {
            try EncodingPass.analyse(
                plan,
                options: request.options,
                trim: trim,
                input: input,
                statsFile: statsFile,
                bitRate: bitRate,
                scratch: request.output.appendingToLastComponent("-pass1")
            )
        } catch {
            EncodingPass.removeStats(statsFile)
            throw error
        }
        return .second(statsFile: statsFile, bitRate: bitRate)
    }

    /// Refuses an input whose headers declare a picture larger than `maxPixels`, a duration longer than
    /// `maxDuration` or more frames than `maxFrames` (the video streams' frame counts, else their duration times
    /// their frame rate), before anything is decoded.
    static func checkLimits(
        _ limits: JobLimits,
        sources: [SourceStream],
        declaredDuration: Double?
    ) throws(FFmpegError) {
        if let limit = limits.duration, let declared = declaredDuration,
            declared > Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        {
            throw FFmpegError(
                .limitExceeded,
                "duration",
                detail: "the input lasts \(OutputVerifier.seconds(declared)); the rule's maxDuration is "
                    + "\(ValueParsing.describe(limit))"
            )
        }
        for source in sources where source.kind == .video {
            if let limit = limits.pixels, source.width * source.height > limit {
                throw FFmpegError(
                    .limitExceeded,
                    "max_pixels",
                    detail: "the \(source.codecName) stream is \(source.width)x\(source.height) pixels; the rule's "
                        + "maxPixels is \(limit)"
                )
            }
            let frames =
                source.frameCount
                ?? declaredDuration.flatMap { duration in
                    source.frameRate.map { Int((duration * $0).rounded()) }
                }
            if let limit = limits.frames, let frames, frames > limit {
                throw FFmpegError(
                    .limitExceeded,
                    "nb_frames",
                    detail: "the \(source.codecName) stream has \(frames) frames; the rule's maxFrames is \(limit)"
                )
            }
        }
    }

    /// Fails when the input's audio and video end well before the duration its header declares: the file was cut
    /// short (a truncated Matroska or WAV still declares its full length).
    private static func checkComplete(
        _ container: borrowing InputContainer,
        extents: [Int: TimeExtent]
    ) throws(FFmpegError) {
        var measured = TimeExtent()
        for extent in extents.values {
            measured.include(extent)
        }
        guard let declared = container.declaredDuration, declared < Self.implausibleDuration,
            let length = measured.length, length < declared, !TimeExtent.agree(length, declared)
        else {
            return
        }
        throw FFmpegError(
            .decode,
            "av_read_frame",
            detail: "the input declares \(OutputVerifier.seconds(declared)) but its streams end after "
                + "\(OutputVerifier.seconds(length)): it is truncated"
        )
    }

    /// The report's details.
    private static func details(
        plan: ConversionPlan,
        transcoded: [String: String],
        container: borrowing InputContainer,
        inputDuration: Double?,
        trim: TrimWindow?,
        verification: OutputVerifier.Result,
        elapsed: Duration
    ) -> [String: String] {
        var details: [String: String] = [
            "mode": plan.isRemux ? "remux" : "transcode",
            "inputFormat": container.formatName,
            "outputDuration": Self.decimal(verification.duration),
            "verification": verification.description,
        ]
        if plan.isRemux {
            details["note"] = "every stream was copied without re-encoding"
        } else {
            // What each codec was given: the scheduler's share, or FFmpeg's own choice (a thread per core).
            details["codecThreads"] = CodecThreads.limit == 0 ? "auto" : "\(CodecThreads.limit)"
        }
        if let inputDuration {
            details["inputDuration"] = Self.decimal(inputDuration)
        }
        if let trim {
            // Where the output really begins in the input: the keyframe at or before `start` when it was copied.
            details["trimStart"] = Self.decimal(trim.startSeconds)
            if let length = trim.length {
                details["trimEnd"] = Self.decimal(trim.startSeconds + length)
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        details["elapsedSeconds"] = Self.decimal(seconds)
        if seconds > 0 {
            details["speed"] = "\(Self.decimal(verification.duration / seconds))x"
        }
        if let video = plan.video {
            // Sizes as a player shows them; `outputRotation` says when the stored picture is turned by a matrix.
            details["inputVideo"] = video.source.summary
            details["inputWidth"] = String(video.source.displaySize.width)
            details["inputHeight"] = String(video.source.displaySize.height)
            let turned = video.keptMatrix?.swapsDimensions == true
            details["outputWidth"] = String(turned ? video.height : video.width)
            details["outputHeight"] = String(turned ? video.width : video.height)
            if let degrees = video.keptMatrix?.clockwiseDegrees, degrees != 0 {
                details["outputRotation"] = String(degrees)
            }
        }
        if !plan.audio.isEmpty {
            details["inputAudio"] = plan.audio.map(\.source.summary).joined(separator: "; ")
        }
        if !plan.subtitles.isEmpty {
            details["outputSubtitles"] = plan.subtitles.map { subtitle in
                subtitle.encoderName.map { "\(subtitle.source.codecName) → \($0)" }
                    ?? "\(subtitle.source.codecName) (copied)"
            }.joined(separator: "; ")
        }
        if !plan.covers.isEmpty {
            details["coverPictures"] = String(plan.covers.count)
        }
        return details.merging(transcoded) { _, written in written }
    }

    /// A number with at most three decimals.
    private static func decimal(_ value: Double) -> String {
        let rounded = (value * 1000).rounded() / 1000
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
