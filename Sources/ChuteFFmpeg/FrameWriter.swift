import CFFmpeg
import ChuteCatalog
import ChuteCore

/// Writes a picture made from a video through FFmpeg's image encoders: a poster frame (`jpg`, `png`, `webp`) or a
/// looping sticker (`gif`, or `webp` with `duration`).
///
/// A poster is the first frame shown at or after `start`; without `start`, the most representative of the first
/// ``thumbnailFrames`` frames as FFmpeg's `thumbnail` filter picks it (the frame whose colour histogram is closest to
/// their average), which passes over a black or faded intro. A sticker covers `duration` seconds (``stickerSeconds``
/// by default, at most ``MediaOptions/stickerSecondsCap``) from `start`, at no more than ``stickerFrameRate`` frames
/// a second and within a ``stickerSide`` px square (or the `width` and `height` box); a GIF gets a
/// palette made for its frames (`palettegen`, then `paletteuse`), and both loop forever. Picture formats have no
/// display matrix, so the pixels are turned the way a player shows them.
///
/// - Important: blocking; runs on the worker's thread, as ``MediaEngine/convert(_:progress:)`` does.
enum FrameWriter {
    /// How many frames the `thumbnail` filter looks at for a poster without `start`.
    static let thumbnailFrames = 100
    /// A sticker's length without `duration`, in seconds.
    static let stickerSeconds = 3.0
    /// A sticker's highest frame rate.
    static let stickerFrameRate = 15.0
    /// The side of the square a sticker fits in without `width` or `height`, in pixels.
    static let stickerSide = 512

    /// How one picture format is written.
    private struct Target {
        let muxer: String
        let encoder: String
        /// The pixel format the encoder takes, as FFmpeg names it; `nil` when the filters end in one (a GIF's
        /// palette).
        let pixelFormat: String?
    }

    /// The muxer, encoder and pixel format of a picture format; `nil` for a format no video is written to.
    private static func target(_ format: TargetFormat, animated: Bool) -> Target? {
        switch format.name {
        // The `image2pipe` muxer writes each packet as it is: one JPEG or PNG file.
        case "jpg": Target(muxer: "image2pipe", encoder: "mjpeg", pixelFormat: "yuvj420p")
        case "png": Target(muxer: "image2pipe", encoder: "png", pixelFormat: "rgb24")
        case "webp": Target(muxer: "webp", encoder: animated ? "libwebp_anim" : "libwebp", pixelFormat: "yuv420p")
        case "gif": Target(muxer: "gif", encoder: "gif", pixelFormat: nil)
        default: nil
        }
    }

    /// Writes the poster or sticker of `request`'s input into `output`.
    ///
    /// - Returns: the report, with `mode` (`poster` or `sticker`), `frameTime` (a poster's time in the video),
    ///   `frames`, the output's size and the input's video.
    /// - Throws: ``FFmpegError``: `unsupportedStream` when the input has no video or no frame at or after `start`,
    ///   `decode` when it does not decode, `filter`, `encode`, `writeOutput`.
    static func write(
        _ request: ConversionRequest,
        input: MediaFile,
        output: MediaFile
    ) throws(FFmpegError) -> ConversionReport {
        let options = request.options
        let format = request.format
        let isSticker = format.name == "gif" || (format.name == "webp" && options[MediaOptions.duration] != nil)
        guard let target = Self.target(format, animated: isSticker) else {
            throw FFmpegError(
                .encoderUnavailable,
                "avcodec_find_encoder_by_name",
                detail: "no \(format.name) from video"
            )
        }
        let container = try InputContainer(file: input)
        let sources = (0..<container.streamCount).map { SourceStream(container.stream(at: $0)) }
        try MediaEngine.checkLimits(request.limits, sources: sources, declaredDuration: container.declaredDuration)
        let best = av_find_best_stream(container.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard best >= 0, sources[Int(best)].kind == .video else {
            throw FFmpegError(
                .unsupportedStream,
                "av_find_best_stream",
                status: chute_averror_stream_not_found(),
                detail: "the input has no video stream for a \(format.name) picture"
            )
        }
        let source = sources[Int(best)]
        let stream = container.stream(at: source.index)
        let decoder = try Decoder(stream: stream)
        let context = decoder.context.pointee

        // The range of the video's time, in seconds from its start, whose frames are pushed into the graph.
        let start = options[MediaOptions.start].flatMap(MediaTime.seconds)
        let from = start ?? 0
        let duration = options[MediaOptions.duration].flatMap(MediaTime.seconds)
        let length: Double? = isSticker ? min(duration ?? Self.stickerSeconds, MediaOptions.stickerSecondsCap) : nil
        var filters = source.displayMatrix?.rotationFilters ?? []
        // Never more frames than the video has.
        let rate = min(Self.stickerFrameRate, source.frameRate ?? Self.stickerFrameRate)
        if isSticker {
            filters.append("fps=fps=\(rate)")
        } else if start == nil {
            filters.append("thumbnail=n=\(Self.thumbnailFrames)")
        }
        let box = (
            width: options[CommonOptions.width] ?? (isSticker ? Self.stickerSide : nil),
            height: options[CommonOptions.height] ?? (isSticker ? Self.stickerSide : nil)
        )
        if !ConversionPlan.fits(source.displaySize, width: box.width, height: box.height, upscale: false) {
            let size = ConversionPlan.fit(source.displaySize, width: box.width, height: box.height, upscale: false)
            filters.append("scale=w=\(size.width):h=\(size.height):flags=lanczos")
        }
        if let pixelFormat = target.pixelFormat {
            filters.append("format=pix_fmts=\(pixelFormat)")
        } else {
            // A palette of the sticker's own colours, weighted to what moves, applied with an ordered dither that
            // compresses better than error diffusion.
            filters.append(
                "split[frames][sample];[sample]palettegen=stats_mode=diff[palette];"
                    + "[frames][palette]paletteuse=dither=bayer:bayer_scale=4:diff_mode=rectangle"
            )
        }
        var frameRate = av_guess_frame_rate(container.context, stream, nil)
        if frameRate.num <= 0 || frameRate.den <= 0 {
            frameRate = AVRational(num: 25, den: 1)
        }
        let graph = try FilterGraph(
            input: FilterGraph.Input(
                timeBase: stream.pointee.time_base,
                pixelFormat: context.pix_fmt,
                width: context.width,
                height: context.height,
                sampleAspectRatio: av_guess_sample_aspect_ratio(container.context, stream, nil),
                frameRate: frameRate
            ),
            isAudio: false,
            chain: filters.joined(separator: ",")
        )

        let muxer = try OutputContainer(file: output, muxer: target.muxer, fileExtension: format.name)
        if isSticker {
            // 0: loop forever (the WebP muxer's default is to play once).
            try FFmpegError.check(
                av_opt_set_int(muxer.context.pointee.priv_data, "loop", 0, 0),
                .writeOutput,
                "av_opt_set_int"
            )
        }
        let codec = try Encoder.find([target.encoder], for: "\(format.name) pictures")
        let sink = graph.sink
        let encoder = try Encoder(
            codec: codec,
            globalHeader: muxer.needsGlobalHeader,
            options: target.encoder.hasPrefix("libwebp") ? [("quality", "80")] : []
        ) { encoder in
            encoder.pointee.width = av_buffersink_get_w(sink)
            encoder.pointee.height = av_buffersink_get_h(sink)
            encoder.pointee.pix_fmt = AVPixelFormat(rawValue: av_buffersink_get_format(sink))
            encoder.pointee.sample_aspect_ratio = av_buffersink_get_sample_aspect_ratio(sink)
            encoder.pointee.time_base = av_buffersink_get_time_base(sink)
            if target.encoder == "mjpeg" {
                // A fixed quantiser of 2, as `ffmpeg -q:v 2` asks: near the source's quality.
                encoder.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
                encoder.pointee.global_quality = Int32(FF_QP2LAMBDA) * 2
                encoder.pointee.color_range = AVCOL_RANGE_JPEG
            }
        }
        let outputStream = try muxer.addStream()
        try FFmpegError.check(
            avcodec_parameters_from_context(outputStream.pointee.codecpar, encoder.context),
            .encode,
            "avcodec_parameters_from_context"
        )
        outputStream.pointee.time_base = encoder.context.pointee.time_base
        try muxer.writeHeader()

        let (written, firstTime, decodeWarnings) = try Self.encode(
            FrameRange(start: start, from: from, length: length, isSticker: isSticker),
            source: source,
            frameRate: frameRate,
            container: container,
            decoder: decoder,
            graph: graph,
            encoder: encoder,
            muxer: muxer,
            outputIndex: outputStream.pointee.index
        )
        var warnings = decodeWarnings
        try muxer.finish()
        // Read back and decoded, as every output of the engine is; FFmpeg 5.1 cannot decode an animated WebP.
        var verification = "not read back: FFmpeg 5.1 does not decode animated WebP"
        if let demuxer = PictureReader.demuxer(for: format.name, animated: isSticker) {
            let (width, height) = (av_buffersink_get_w(sink), av_buffersink_get_h(sink))
            let decoded = try PictureReader(file: output, demuxer: demuxer).decodeAll(width: width, height: height)
            guard decoded == written else {
                throw FFmpegError(
                    .verify,
                    "av_read_frame",
                    detail: "\(written) frames were written, \(decoded) read back"
                )
            }
            verification = "read back and decoded entirely"
        }

        let ignored = options.values.keys.filter { !MediaOptions.stickerKeys.contains($0) }.sorted()
        if !ignored.isEmpty {
            warnings.append(
                "not applied to a picture made from a video: " + ignored.map { "'\($0)'" }.joined(separator: ", ")
            )
        }
        var report = ConversionReport(outputBytes: 0, warnings: warnings)
        report.captured = container.captureTime
        report.details = [
            "mode": isSticker ? "sticker" : "poster",
            "inputFormat": container.formatName,
            "inputVideo": source.summary,
            "outputWidth": String(av_buffersink_get_w(sink)),
            "outputHeight": String(av_buffersink_get_h(sink)),
            "frames": String(written),
            "verification": verification,
        ]
        if let firstTime {
            report.details[isSticker ? "start" : "frameTime"] = String((firstTime * 1000).rounded() / 1000)
        }
        if isSticker {
            report.details["frameRate"] = String((rate * 1000).rounded() / 1000)
        }
        return report
    }

    /// The frames a picture takes from the video.
    private struct FrameRange {
        /// The rule's `start`, if it has one.
        let start: Double?
        /// Where the frames start, in seconds from the video's start.
        let from: Double
        /// A sticker's length in seconds; `nil` for a poster.
        let length: Double?
        let isSticker: Bool
    }

    /// Reads the video from `range.from`, pushes its frames through the graph and encodes what comes out: every frame
    /// of a sticker, the first of a poster.
    ///
    /// - Returns: the frames encoded, the time of the first in the video, and the decoder's warnings.
    private static func encode(
        _ range: FrameRange,
        source: SourceStream,
        frameRate: AVRational,
        container: borrowing InputContainer,
        decoder: borrowing Decoder,
        graph: borrowing FilterGraph,
        encoder: borrowing Encoder,
        muxer: borrowing OutputContainer,
        outputIndex: Int32
    ) throws(FFmpegError) -> (frames: Int, firstTime: Double?, warnings: [String]) {
        let (start, from, length, isSticker) = (range.start, range.from, range.length, range.isSticker)
        let stream = container.stream(at: source.index)
        if from > 0 {
            try container.seek(toSeconds: from)
        }
        let timeBase = stream.pointee.time_base
        let origin = Double(container.startMicroseconds) / Double(AV_TIME_BASE)
        // The sticker's timestamps start at 0, at `start`.
        let shift = isSticker ? Int64((from + origin) / av_q2d(timeBase)) : 0
        var pushed = 0
        var enough = false
        var nextTimestamp: Int64 = 0
        let frameTicks = max(1, av_rescale_q(1, av_inv_q(frameRate), timeBase))
        var tally = DecodeTally(streamIndex: source.index, codecName: source.codecName)
        let packet = try Packet()
        let decoded = try Frame()
        let filtered = try Frame()
        let encoded = try Packet()
        var written = 0
        var firstTime: Double?

        /// Encodes what the graph hands out: every frame of a sticker, the first of a poster.
        func drainGraph() throws(FFmpegError) {
            while !(written > 0 && !isSticker), case .ready = try graph.pull(into: filtered) {
                defer { filtered.unref() }
                let frame = filtered.pointer
                if firstTime == nil {
                    firstTime = Double(frame.pointee.pts) * av_q2d(graph.outputTimeBase) - origin
                }
                frame.pointee.pts = av_rescale_q(
                    frame.pointee.pts,
                    graph.outputTimeBase,
                    encoder.context.pointee.time_base
                )
                frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
                try encoder.send(filtered)
                written += 1
                try drainEncoder()
            }
        }

        func drainEncoder() throws(FFmpegError) {
            while case .ready = try encoder.receive(into: encoded) {
                let pointer = encoded.pointer
                if pointer.pointee.duration == 0 && isSticker {
                    // One tick of a sticker's time base is one frame.
                    pointer.pointee.duration = 1
                }
                pointer.pointee.stream_index = outputIndex
                av_packet_rescale_ts(
                    pointer,
                    encoder.context.pointee.time_base,
                    muxer.stream(at: outputIndex).pointee.time_base
                )
                try muxer.write(encoded)
            }
        }

        /// Pushes the frames in the range into the graph, and says when no later frame is wanted.
        func take(_ frame: borrowing Frame) throws(FFmpegError) {
            guard !enough else { return }
            let pointer = frame.pointer
            let timestamp = pointer.pointee.best_effort_timestamp
            pointer.pointee.pts = timestamp != chute_nopts_value() ? timestamp : nextTimestamp
            let duration = pointer.pointee.pkt_duration
            nextTimestamp = pointer.pointee.pts + (duration > 0 ? duration : frameTicks)
            let seconds = Double(pointer.pointee.pts) * av_q2d(timeBase) - origin
            // Half a frame of tolerance: a frame shown at 2.9999 s is the frame at 3 s.
            let halfFrame = 0.5 / av_q2d(frameRate)
            if seconds + halfFrame < from { return }
            if let length, seconds + halfFrame >= from + length {
                enough = true
                return
            }
            pointer.pointee.pts -= shift
            try graph.push(frame)
            pushed += 1
            if !isSticker && (start != nil || pushed >= Self.thumbnailFrames) {
                enough = true
            }
            try drainGraph()
        }

        while !enough, try container.read(into: packet) {
            defer { packet.unref() }
            guard Int(packet.pointer.pointee.stream_index) == source.index else { continue }
            try decoder.decode(packet, into: decoded, tally: &tally, handle: take)
        }
        if !enough {
            try decoder.finish(into: decoded, tally: &tally, handle: take)
        }
        let warning = try tally.verdict()
        guard pushed > 0 else {
            throw FFmpegError(
                .unsupportedStream,
                "avcodec_receive_frame",
                detail: "the video has no frame at or after \(OutputVerifier.seconds(from)) (start)"
            )
        }
        try graph.pushEndOfStream()
        try drainGraph()
        try encoder.sendEndOfStream()
        try drainEncoder()
        return (written, firstTime, warning.map { [$0] } ?? [])
    }
}
