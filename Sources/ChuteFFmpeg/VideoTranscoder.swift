import CFFmpeg
import ChuteCatalog
import ChuteCore

/// Decodes one video stream, turns, scales and converts its frames in a ``FilterGraph``, and encodes them.
///
/// The encoder is set up the way the `ffmpeg` CLI sets it up for the same options (time base of one frame at the
/// guessed frame rate, the graph's size, pixel format and aspect ratio, the source's colour description, as many
/// threads as the machine has unless ``CodecThreads`` says), so that Chute's output matches the CLI's bit for bit (the
/// daemon's workers, given fewer threads by the CPU budget, match `ffmpeg -threads N`). Timestamps pass through: a
/// frame whose time rounds onto its predecessor's is dropped, and none is ever duplicated, so a file with a gap of
/// hours does not become hours of repeated frames.
final class VideoTranscoder: StreamTranscoder {
    let outputIndex: Int32
    private(set) var tally: DecodeTally
    private(set) var decodedExtent = TimeExtent()
    /// The frames handed to the encoder, and those dropped for landing on a taken timestamp.
    private(set) var framesEncoded = 0
    private(set) var framesDropped = 0
    let outputSummary: String

    private let decoder: Decoder
    private let graph: FilterGraph
    private let encoder: Encoder
    private let decoded: Frame
    private let filtered: Frame
    private let packet: Packet
    /// The last timestamp handed to the encoder, in its time base.
    private var lastTimestamp = Int64.min
    /// The input stream's time base, a frame's duration in it, and the time expected for the next frame, for
    /// frames the decoder gives no time (streams from containers without timestamps).
    private let streamTimeBase: AVRational
    private let frameTicks: Int64
    private var nextTimestamp: Int64 = 0

    /// Sets up decoding, filtering and encoding for one stream, and adds its output stream.
    ///
    /// - Parameters:
    ///   - plan: what to make of the stream.
    ///   - settings: the encoder settings from the rule.
    ///   - trim: the part of the stream to keep, when the rule trims.
    ///   - input: the input container.
    ///   - output: the output container, before its header is written.
    /// - Throws: ``FFmpegError``: `unsupportedStream` or `decode` for the decoder, `filter`, `encoderUnavailable`,
    ///   `encode`.
    init(
        plan: ConversionPlan.Video,
        settings: VideoEncoderSettings,
        trim: TrimWindow?,
        input: borrowing InputContainer,
        output: borrowing OutputContainer
    ) throws(FFmpegError) {
        let stream = input.stream(at: plan.source.index)
        let decoder = try Decoder(stream: stream)
        let context = decoder.context.pointee
        guard context.pix_fmt != AV_PIX_FMT_NONE, context.width > 0, context.height > 0 else {
            throw FFmpegError(
                .decode,
                "avcodec_open2",
                detail: "the picture format of stream #\(plan.source.index) (\(plan.source.codecName)) is unknown"
            )
        }
        var frameRate = av_guess_frame_rate(input.context, stream, nil)
        if frameRate.num <= 0 || frameRate.den <= 0 {
            frameRate = AVRational(num: 25, den: 1)
        }
        let graph = try FilterGraph(
            input: FilterGraph.Input(
                timeBase: stream.pointee.time_base,
                pixelFormat: context.pix_fmt,
                width: context.width,
                height: context.height,
                sampleAspectRatio: av_guess_sample_aspect_ratio(input.context, stream, nil),
                frameRate: frameRate
            ),
            isAudio: false,
            chain: ((trim.map { [$0.filter(isAudio: false)] } ?? []) + plan.filters).joined(separator: ",")
        )
        let sinkRate = av_buffersink_get_frame_rate(graph.sink)
        if sinkRate.num > 0 && sinkRate.den > 0 {
            frameRate = sinkRate
        }
        if let maximum = plan.maxFrameRate, av_q2d(frameRate) > maximum + 0.01 {
            // One tick of the encoder's time base is one frame at the cap; `drainGraph` drops frames that round onto
            // a tick already taken, so the rate is capped by dropping frames only.
            frameRate = av_d2q(maximum, 1_001_000)
        }
        let codec = try Encoder.find(plan.codec.encoderNames, for: "\(plan.codec.rawValue) video")
        // The container's frame rates (MPEG's standard ones), else the encoder's own list, if either has one: the
        // nearest, among those within the rule's cap when any is.
        if var rates = plan.frameRates ?? Self.frameRates(of: codec), !rates.isEmpty {
            if let maximum = plan.maxFrameRate, rates.contains(where: { av_q2d($0) <= maximum + 0.01 }) {
                rates.removeAll { av_q2d($0) > maximum + 0.01 }
            }
            let wanted = av_q2d(frameRate)
            frameRate = rates.min { abs(av_q2d($0) - wanted) < abs(av_q2d($1) - wanted) }!
        }
        let parameters = stream.pointee.codecpar.pointee
        let sink = graph.sink
        let encoder = try Encoder(
            codec: codec,
            globalHeader: output.needsGlobalHeader,
            options: settings.options(for: codec)
        ) { encoder in
            encoder.pointee.width = av_buffersink_get_w(sink)
            encoder.pointee.height = av_buffersink_get_h(sink)
            encoder.pointee.pix_fmt = AVPixelFormat(rawValue: av_buffersink_get_format(sink))
            encoder.pointee.sample_aspect_ratio = av_buffersink_get_sample_aspect_ratio(sink)
            encoder.pointee.time_base = av_inv_q(frameRate)
            encoder.pointee.framerate = frameRate
            encoder.pointee.thread_count = CodecThreads.encoder
            encoder.pointee.color_primaries = plan.colour?.primaries ?? parameters.color_primaries
            encoder.pointee.color_trc = plan.colour?.transfer ?? parameters.color_trc
            encoder.pointee.colorspace = plan.colour?.space ?? parameters.color_space
            encoder.pointee.chroma_sample_location = plan.colour?.chromaLocation ?? parameters.chroma_location
            // Full-range ("J") sources are converted to the limited range of the output's pixel format.
            let isFullRangeFormat = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].contains(
                context.pix_fmt
            )
            encoder.pointee.color_range =
                plan.colour?.range ?? (isFullRangeFormat ? AVCOL_RANGE_MPEG : parameters.color_range)
            settings.configure(encoder)
        }
        let outputStream = try output.addStream()
        try FFmpegError.check(
            avcodec_parameters_from_context(outputStream.pointee.codecpar, encoder.context),
            .encode,
            "avcodec_parameters_from_context"
        )
        try Self.copySideData(from: encoder.context, to: outputStream)
        outputStream.pointee.time_base = encoder.context.pointee.time_base
        outputStream.pointee.avg_frame_rate = frameRate
        outputStream.pointee.sample_aspect_ratio = encoder.context.pointee.sample_aspect_ratio
        TagCopy.copy(from: stream.pointee.metadata, to: &outputStream.pointee.metadata)
        if let tag = settings.codecTag {
            outputStream.pointee.codecpar.pointee.codec_tag = tag
        }
        try plan.keptMatrix?.attach(to: outputStream)

        self.streamTimeBase = stream.pointee.time_base
        self.frameTicks = max(1, av_rescale_q(1, av_inv_q(frameRate), stream.pointee.time_base))
        self.outputIndex = outputStream.pointee.index
        self.tally = DecodeTally(streamIndex: plan.source.index, codecName: plan.source.codecName)
        self.outputSummary = "\(String(cString: codec.pointee.name)) \(plan.width)x\(plan.height)"
        self.decoded = try Frame()
        self.filtered = try Frame()
        self.packet = try Packet()
        self.decoder = decoder
        self.graph = graph
        self.encoder = encoder
    }

    /// The frame rates an encoder takes (MPEG-1's and MPEG-2's), or `nil` when it takes any.
    private static func frameRates(of codec: UnsafePointer<AVCodec>) -> [AVRational]? {
        guard var rate = codec.pointee.supported_framerates else { return nil }
        var rates: [AVRational] = []
        while rate.pointee.num != 0 {
            rates.append(rate.pointee)
            rate += 1
        }
        return rates
    }

    /// Copies what the encoder says about its stream as a whole (MPEG video's decoder buffer size) to the output
    /// stream, where the muxer looks for it, as the `ffmpeg` CLI does. The corresponding C function is
    /// `av_stream_new_side_data`.
    private static func copySideData(
        from context: UnsafeMutablePointer<AVCodecContext>,
        to stream: UnsafeMutablePointer<AVStream>
    ) throws(FFmpegError) {
        for index in 0..<Int(context.pointee.nb_coded_side_data) {
            let item = context.pointee.coded_side_data[index]
            guard let copy = av_stream_new_side_data(stream, item.type, item.size) else {
                throw FFmpegError(.encode, "av_stream_new_side_data", status: chute_averror(ENOMEM))
            }
            copy.update(from: item.data, count: item.size)
        }
    }

    func transcode(_ packet: borrowing Packet, into output: borrowing OutputContainer) throws(FFmpegError) {
        try self.decoder.decode(packet, into: self.decoded, tally: &self.tally) { (frame) throws(FFmpegError) in
            try self.filter(frame, into: output)
        }
    }

    func finish(into output: borrowing OutputContainer) throws(FFmpegError) {
        try self.decoder.finish(into: self.decoded, tally: &self.tally) { (frame) throws(FFmpegError) in
            try self.filter(frame, into: output)
        }
        try self.graph.pushEndOfStream(at: self.nextTimestamp)
        try self.drainGraph(into: output)
        try self.encoder.sendEndOfStream()
        try self.drainEncoder(into: output)
    }

    /// Pushes a decoded frame through the graph and encodes what comes out.
    private func filter(_ frame: borrowing Frame, into output: borrowing OutputContainer) throws(FFmpegError) {
        let decoded = frame.pointer
        let timestamp = decoded.pointee.best_effort_timestamp
        decoded.pointee.pts = timestamp != chute_nopts_value() ? timestamp : self.nextTimestamp
        let duration = decoded.pointee.pkt_duration
        self.nextTimestamp = decoded.pointee.pts + (duration > 0 ? duration : self.frameTicks)
        let seconds = av_q2d(self.streamTimeBase)
        self.decodedExtent.include(
            start: Double(decoded.pointee.pts) * seconds,
            end: Double(self.nextTimestamp) * seconds
        )
        try self.graph.push(frame)
        try self.drainGraph(into: output)
    }

    private func drainGraph(into output: borrowing OutputContainer) throws(FFmpegError) {
        while case .ready = try self.graph.pull(into: self.filtered) {
            defer { self.filtered.unref() }
            let frame = self.filtered.pointer
            let timestamp = av_rescale_q(
                frame.pointee.pts,
                self.graph.outputTimeBase,
                self.encoder.context.pointee.time_base
            )
            guard timestamp > self.lastTimestamp else {
                self.framesDropped += 1
                continue
            }
            self.lastTimestamp = timestamp
            frame.pointee.pts = timestamp
            // The decoder's picture types would force the encoder's frame types; the CLI clears them too.
            frame.pointee.pict_type = AV_PICTURE_TYPE_NONE
            // FFmpeg's MPEG-family encoders take a fixed quantizer from each frame's quality, not the context's (the
            // CLI copies it over too); without it they encode at their finest, 2.
            frame.pointee.quality = self.encoder.context.pointee.global_quality
            try self.encoder.send(self.filtered)
            self.framesEncoded += 1
            try self.drainEncoder(into: output)
        }
    }

    private func drainEncoder(into output: borrowing OutputContainer) throws(FFmpegError) {
        let timeBase = self.encoder.context.pointee.time_base
        let streamTimeBase = output.stream(at: self.outputIndex).pointee.time_base
        while case .ready = try self.encoder.receive(into: self.packet) {
            let packet = self.packet.pointer
            // libx264 in FFmpeg 5.1 leaves durations at 0, which would shorten the last frame (and the file) to
            // nothing; one tick of the encoder's time base is one frame.
            if packet.pointee.duration == 0 {
                packet.pointee.duration = 1
            }
            packet.pointee.stream_index = self.outputIndex
            av_packet_rescale_ts(packet, timeBase, streamTimeBase)
            try output.write(self.packet)
        }
    }
}
