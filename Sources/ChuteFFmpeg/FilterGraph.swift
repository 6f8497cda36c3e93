import CFFmpeg

/// Owns one `AVFilterGraph` from a `buffer` (or `abuffer`) source through a chain of filters to a `buffersink`.
///
/// Video graphs rotate, scale (bicubic, as the `ffmpeg` CLI does), limit the frame rate and convert the pixel
/// format; audio graphs resample and convert the sample format and channel layout, and hand out frames of the size
/// the encoder needs. The chain is built only from numbers and FFmpeg's own format names, never from file names or
/// metadata. The graph's filters use the threads ``CodecThreads`` gives them.
///
/// The corresponding C functions are `avfilter_graph_alloc`, `avfilter_graph_parse_ptr`, `avfilter_graph_config`
/// and `avfilter_graph_free`.
struct FilterGraph: ~Copyable {
    /// The source's parameters.
    struct Input {
        /// The time base of the frames' timestamps.
        var timeBase: AVRational
        /// Video: the pixel format, width, height, sample aspect ratio and frame rate.
        var pixelFormat = AV_PIX_FMT_NONE
        var width: Int32 = 0
        var height: Int32 = 0
        var sampleAspectRatio = AVRational(num: 0, den: 1)
        var frameRate = AVRational(num: 0, den: 1)
        /// Audio: the sample format, rate and channel layout (a native layout; unordered ones get the default).
        var sampleFormat = AV_SAMPLE_FMT_NONE
        var sampleRate: Int32 = 0
        var channels: Int32 = 0
        var channelMask: UInt64 = 0
    }

    private let graph: UnsafeMutablePointer<AVFilterGraph>
    private let source: UnsafeMutablePointer<AVFilterContext>
    /// The sink, whose negotiated parameters configure the encoder.
    let sink: UnsafeMutablePointer<AVFilterContext>

    /// Builds and configures a graph.
    ///
    /// - Parameters:
    ///   - input: the frames that will be pushed.
    ///   - isAudio: whether the frames are audio.
    ///   - chain: the filters between source and sink, such as `scale=w=1280:h=720:flags=bicubic,format=yuv420p`.
    /// - Throws: ``FFmpegError`` with code `filter`.
    init(input: Input, isAudio: Bool, chain: String) throws(FFmpegError) {
        guard let graph = avfilter_graph_alloc() else {
            throw FFmpegError(.filter, "avfilter_graph_alloc", status: chute_averror(ENOMEM))
        }
        var owned: UnsafeMutablePointer<AVFilterGraph>? = graph
        do throws(FFmpegError) {
            // The scale filters that format negotiation inserts use the same flags as the CLI's.
            graph.pointee.scale_sws_opts = av_strdup("flags=bicubic")
            graph.pointee.nb_threads = CodecThreads.filter
            let source = try Self.makeSource(in: graph, input: input, isAudio: isAudio)
            var sink: UnsafeMutablePointer<AVFilterContext>?
            try FFmpegError.check(
                avfilter_graph_create_filter(
                    &sink,
                    avfilter_get_by_name(isAudio ? "abuffersink" : "buffersink"),
                    "out",
                    nil,
                    nil,
                    graph
                ),
                .filter,
                "avfilter_graph_create_filter"
            )
            try Self.link(source: source, sink: sink!, chain: chain, in: graph)
            try FFmpegError.check(avfilter_graph_config(graph, nil), .filter, "avfilter_graph_config")
            self.graph = graph
            self.source = source
            self.sink = sink!
        } catch {
            avfilter_graph_free(&owned)
            throw error
        }
    }

    deinit {
        var graph: UnsafeMutablePointer<AVFilterGraph>? = self.graph
        avfilter_graph_free(&graph)
    }

    /// Makes the sink hand out frames of exactly `samples` samples (the last one may be shorter), as encoders with
    /// a fixed frame size (AAC: 1024, MP3: 1152) need. The corresponding C function is `av_buffersink_set_frame_size`.
    func setFrameSize(_ samples: Int32) {
        av_buffersink_set_frame_size(self.sink, UInt32(samples))
    }

    /// Pushes a frame in; the graph takes its data and leaves `frame` empty.
    /// The corresponding C function is `av_buffersrc_add_frame_flags`.
    ///
    /// - Throws: ``FFmpegError`` with code `decode` when the frame's format differs from the one the graph was built
    ///   for (a stream whose size or sample format changes midway, which Chute does not follow), `filter` otherwise.
    func push(_ frame: borrowing Frame) throws(FFmpegError) {
        let status = av_buffersrc_add_frame_flags(self.source, frame.pointer, 0)
        // A graph that has ended (a `trim` past its end) takes no more frames; the rest of the stream is not wanted.
        if status == chute_averror_eof() { return }
        if status == chute_averror(EINVAL) {
            throw FFmpegError(
                .decode,
                "av_buffersrc_add_frame_flags",
                status: status,
                detail: "the stream changes its picture or sample format partway through"
            )
        }
        try FFmpegError.check(status, .filter, "av_buffersrc_add_frame_flags")
    }

    /// Tells the graph that no frame follows.
    func pushEndOfStream() throws(FFmpegError) {
        try FFmpegError.check(
            av_buffersrc_add_frame_flags(self.source, nil, 0),
            .filter,
            "av_buffersrc_add_frame_flags"
        )
    }

    /// Ends the input at `timestamp` (in the input's time base), where the last frame ends, as the `ffmpeg` CLI
    /// does: a filter that makes a constant frame rate (`fps`) then keeps the last frame for its whole duration. The
    /// corresponding C function is `av_buffersrc_close`.
    func pushEndOfStream(at timestamp: Int64) throws(FFmpegError) {
        try FFmpegError.check(av_buffersrc_close(self.source, timestamp, 0), .filter, "av_buffersrc_close")
    }

    /// Takes the next filtered frame into `frame`. The corresponding C function is `av_buffersink_get_frame`.
    func pull(into frame: borrowing Frame) throws(FFmpegError) -> CodecOutput {
        let status = av_buffersink_get_frame(self.sink, frame.pointer)
        if status == chute_averror(EAGAIN) { return .needsInput }
        if status == chute_averror_eof() { return .finished }
        try FFmpegError.check(status, .filter, "av_buffersink_get_frame")
        return .ready
    }

    /// The time base of the frames the sink hands out.
    var outputTimeBase: AVRational { av_buffersink_get_time_base(self.sink) }

    private static func makeSource(
        in graph: UnsafeMutablePointer<AVFilterGraph>,
        input: Input,
        isAudio: Bool
    ) throws(FFmpegError) -> UnsafeMutablePointer<AVFilterContext> {
        guard
            let source = avfilter_graph_alloc_filter(graph, avfilter_get_by_name(isAudio ? "abuffer" : "buffer"), "in"),
            let parameters = av_buffersrc_parameters_alloc()
        else {
            throw FFmpegError(.filter, "avfilter_graph_alloc_filter", status: chute_averror(ENOMEM))
        }
        defer {
            av_channel_layout_uninit(&parameters.pointee.ch_layout)
            av_free(parameters)
        }
        parameters.pointee.time_base = input.timeBase
        if isAudio {
            parameters.pointee.format = input.sampleFormat.rawValue
            parameters.pointee.sample_rate = input.sampleRate
            if input.channelMask != 0 {
                av_channel_layout_from_mask(&parameters.pointee.ch_layout, input.channelMask)
            } else {
                av_channel_layout_default(&parameters.pointee.ch_layout, input.channels)
            }
        } else {
            parameters.pointee.format = input.pixelFormat.rawValue
            parameters.pointee.width = input.width
            parameters.pointee.height = input.height
            parameters.pointee.sample_aspect_ratio = input.sampleAspectRatio
            parameters.pointee.frame_rate = input.frameRate
        }
        try FFmpegError.check(av_buffersrc_parameters_set(source, parameters), .filter, "av_buffersrc_parameters_set")
        try FFmpegError.check(avfilter_init_str(source, nil), .filter, "avfilter_init_str")
        return source
    }

    private static func link(
        source: UnsafeMutablePointer<AVFilterContext>,
        sink: UnsafeMutablePointer<AVFilterContext>,
        chain: String,
        in graph: UnsafeMutablePointer<AVFilterGraph>
    ) throws(FFmpegError) {
        // In avfilter_graph_parse_ptr's terms, the source is the chain's open output and the sink its open input.
        var outputs = avfilter_inout_alloc()
        var inputs = avfilter_inout_alloc()
        defer {
            avfilter_inout_free(&inputs)
            avfilter_inout_free(&outputs)
        }
        guard let output = outputs, let input = inputs else {
            throw FFmpegError(.filter, "avfilter_inout_alloc", status: chute_averror(ENOMEM))
        }
        output.pointee.name = av_strdup("in")
        output.pointee.filter_ctx = source
        input.pointee.name = av_strdup("out")
        input.pointee.filter_ctx = sink
        // avfilter_graph_parse_ptr consumes the lists and leaves in them whatever it did not link; defer frees that.
        try FFmpegError.check(
            avfilter_graph_parse_ptr(graph, chain, &inputs, &outputs, nil),
            .filter,
            "avfilter_graph_parse_ptr"
        )
    }
}
