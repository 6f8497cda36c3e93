import CFFmpeg
import ChuteCatalog
import ChuteCore

/// Decodes one audio stream, resamples it in a ``FilterGraph`` and encodes it.
///
/// As in the `ffmpeg` CLI, the graph ends in an `aformat` filter listing what the encoder takes (its sample
/// formats, sample rates and channel layouts, narrowed by the rule's `sampleRate` and `channels`), so format
/// negotiation picks the nearest match to the source; the sink then hands out frames of exactly the encoder's frame
/// size (AAC needs 1024 samples each). AMR-NB is encoded by opencore-amrnb (``AMRNBEncoder``) from mono 8 kHz frames of
/// 160 samples.
final class AudioTranscoder: StreamTranscoder {
    let outputIndex: Int32
    private(set) var tally: DecodeTally
    private(set) var decodedExtent = TimeExtent()
    let outputSummary: String

    private let decoder: Decoder
    private let graph: FilterGraph
    private let encoder: AudioEncoder
    private let decoded: Frame
    private let filtered: Frame
    private let packet: Packet
    /// The decoder's time base for the graph: one sample.
    private let sampleTimeBase: AVRational
    private let streamTimeBase: AVRational
    /// Where the next frame starts when the decoder gives it no time (WMA in ASF), in samples.
    private var nextSample: Int64 = 0
    /// For AMV, where the muxer pairs each video frame with one block of audio and pads whichever stream comes twice
    /// in a row: the time of the next block, counted in samples from the first, so that blocks fall exactly on the
    /// video's frame times (the graph's own times wander by a few samples around them, after the source's rounded
    /// timestamps). `nil` elsewhere.
    private var nextBlock: Int64?

    /// Sets up decoding, resampling and encoding for one stream (cut to `trim`, when the rule trims), and adds its
    /// output stream.
    ///
    /// - Parameters:
    ///   - plan: what to make of the stream.
    ///   - trim: the part of the input to keep, cut by an `atrim` filter when the rule trims.
    ///   - videoFrameRate: the output's video frame rate, if it has video: an AMV's audio comes in blocks of one
    ///     video frame.
    ///   - input: the input container.
    ///   - output: the output container, before its header is written.
    /// - Throws: ``FFmpegError``: `unsupportedStream` or `decode` for the decoder, `filter`, `encoderUnavailable`,
    ///   `encode`.
    init(
        plan: ConversionPlan.Audio,
        trim: TrimWindow?,
        videoFrameRate: AVRational?,
        input: borrowing InputContainer,
        output: borrowing OutputContainer
    ) throws(FFmpegError) {
        let stream = input.stream(at: plan.source.index)
        let decoder = try Decoder(stream: stream)
        let context = decoder.context.pointee
        guard context.sample_fmt != AV_SAMPLE_FMT_NONE, context.sample_rate > 0, context.ch_layout.nb_channels > 0
        else {
            throw FFmpegError(
                .decode,
                "avcodec_open2",
                detail: "the sample format of stream #\(plan.source.index) (\(plan.source.codecName)) is unknown"
            )
        }
        let isAMR = plan.encoding.codecID == AV_CODEC_ID_AMR_NB
        let codec = isAMR ? nil : try Encoder.find([plan.encoding.encoderName], for: "\(plan.encoding.name) audio")
        let sampleTimeBase = AVRational(num: 1, den: context.sample_rate)
        let isNativeOrder = context.ch_layout.order == AV_CHANNEL_ORDER_NATIVE
        let graph = try FilterGraph(
            input: FilterGraph.Input(
                timeBase: sampleTimeBase,
                sampleFormat: context.sample_fmt,
                sampleRate: context.sample_rate,
                channels: context.ch_layout.nb_channels,
                channelMask: isNativeOrder ? context.ch_layout.u.mask : 0
            ),
            isAudio: true,
            chain: ((trim.map { [$0.filter(isAudio: true)] } ?? []) + plan.filters + [
                codec.map { Self.formatFilter(for: $0, plan: plan) } ?? AMRNBEncoder.formatFilter
            ])
            .joined(separator: ",")
        )
        let encoder: AudioEncoder
        if let codec {
            encoder = .ffmpeg(
                try Self.makeEncoder(codec, plan: plan, graph: graph, videoFrameRate: videoFrameRate, output: output)
            )
        } else {
            encoder = .amrNB(try AMRNBEncoder(bitRate: plan.bitRate))
            graph.setFrameSize(AMRNBEncoder.frameSamples)
        }
        let outputStream = try output.addStream()
        try encoder.describe(outputStream.pointee.codecpar)
        outputStream.pointee.time_base = encoder.timeBase
        TagCopy.copy(from: stream.pointee.metadata, to: &outputStream.pointee.metadata)

        self.outputIndex = outputStream.pointee.index
        self.tally = DecodeTally(streamIndex: plan.source.index, codecName: plan.source.codecName)
        self.outputSummary = "\(plan.encoding.name) \(encoder.sampleRate) Hz \(encoder.channels) ch"
        self.sampleTimeBase = sampleTimeBase
        self.streamTimeBase = stream.pointee.time_base
        self.decoded = try Frame()
        self.filtered = try Frame()
        self.packet = try Packet()
        self.decoder = decoder
        self.graph = graph
        self.encoder = encoder
        self.nextBlock = plan.encoding.codecID == AV_CODEC_ID_ADPCM_IMA_AMV ? Int64.min : nil
    }

    /// Opens one of FFmpeg's encoders for what the graph gives out, and tells the graph its frame size.
    private static func makeEncoder(
        _ codec: UnsafePointer<AVCodec>,
        plan: ConversionPlan.Audio,
        graph: borrowing FilterGraph,
        videoFrameRate: AVRational?,
        output: borrowing OutputContainer
    ) throws(FFmpegError) -> Encoder {
        let sink = graph.sink
        var options: [(String, String)] = []
        if plan.encoding.codecID == AV_CODEC_ID_ADPCM_IMA_AMV, let frameRate = videoFrameRate, frameRate.num > 0 {
            // The AMV muxer wants one block of audio per video frame, rounded up (882 samples at 25 fps).
            let sampleRate = Int64(av_buffersink_get_sample_rate(sink))
            let samples = (sampleRate * Int64(frameRate.den) + Int64(frameRate.num) - 1) / Int64(frameRate.num)
            options.append(("block_size", String(samples)))
        }
        let encoder = try Encoder(codec: codec, globalHeader: output.needsGlobalHeader, options: options) { encoder in
            encoder.pointee.sample_fmt = AVSampleFormat(rawValue: av_buffersink_get_format(sink))
            encoder.pointee.sample_rate = av_buffersink_get_sample_rate(sink)
            av_buffersink_get_ch_layout(sink, &encoder.pointee.ch_layout)
            encoder.pointee.time_base = AVRational(num: 1, den: encoder.pointee.sample_rate)
            var bitRate = Int64(plan.bitRate ?? 0)
            if plan.encoding.codecID == AV_CODEC_ID_AAC {
                // AAC carries at most 6144 bits per channel in a 1024-sample frame; asking for more (128k for 8 kHz
                // mono) only makes the encoder clamp it and complain.
                bitRate = min(
                    bitRate,
                    6 * Int64(encoder.pointee.sample_rate) * Int64(encoder.pointee.ch_layout.nb_channels)
                )
            }
            encoder.pointee.bit_rate = bitRate
            if let bits = plan.encoding.bitsPerRawSample {
                encoder.pointee.bits_per_raw_sample = bits
            }
            if plan.encoding.codecID == AV_CODEC_ID_DTS {
                // FFmpeg's DTS encoder is marked experimental, though its files play.
                encoder.pointee.strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL
            }
        }
        if codec.pointee.capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE == 0 {
            graph.setFrameSize(encoder.context.pointee.frame_size)
        }
        return encoder
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
        try self.graph.pushEndOfStream()
        try self.drainGraph(into: output)
        try self.encoder.sendEndOfStream()
        try self.drainEncoder(into: output)
    }

    /// The `aformat` filter that ends the graph: the encoder's sample formats (or the one Chute picks for FLAC and
    /// PCM), its sample rates and channel layouts, each narrowed by the rule (and the rates by the container); a list
    /// the encoder does not have is left out, so the source's value passes.
    private static func formatFilter(for codec: UnsafePointer<AVCodec>, plan: ConversionPlan.Audio) -> String {
        var formats = plan.encoding.sampleFormat.map { [$0] } ?? []
        if formats.isEmpty, var format = codec.pointee.sample_fmts {
            while format.pointee != AV_SAMPLE_FMT_NONE {
                formats.append(format.pointee)
                format += 1
            }
        }
        var parts = [
            "sample_fmts=" + formats.map { String(cString: av_get_sample_fmt_name($0)) }.joined(separator: "|")
        ]

        var rates = plan.sampleRate.map { [Int32($0)] } ?? []
        if rates.isEmpty, var rate = codec.pointee.supported_samplerates {
            while rate.pointee != 0 {
                rates.append(rate.pointee)
                rate += 1
            }
        }
        if plan.sampleRate == nil, let allowed = plan.containerRates {
            // The container's rates, those of them the encoder takes; the filter graph picks the nearest.
            rates = rates.isEmpty ? allowed.map(Int32.init) : rates.filter { allowed.contains(Int($0)) }
        }
        if !rates.isEmpty {
            parts.append("sample_rates=" + rates.map(String.init).joined(separator: "|"))
        }

        var layouts: [String] = []
        if var layout = codec.pointee.ch_layouts {
            while layout.pointee.nb_channels != 0 {
                if plan.channels.map({ $0 == layout.pointee.nb_channels }) ?? true {
                    layouts.append(Self.describe(layout))
                }
                layout += 1
            }
        }
        if layouts.isEmpty, let channels = plan.channels {
            var layout = AVChannelLayout()
            av_channel_layout_default(&layout, Int32(channels))
            layouts.append(Self.describe(&layout))
            av_channel_layout_uninit(&layout)
        }
        if !layouts.isEmpty {
            parts.append("channel_layouts=" + layouts.joined(separator: "|"))
        }
        return "aformat=" + parts.joined(separator: ":")
    }

    /// A channel layout's name, such as `stereo` or `5.1(side)`. The corresponding C function is
    /// `av_channel_layout_describe`.
    private static func describe(_ layout: UnsafePointer<AVChannelLayout>) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 128) { buffer in
            guard let start = buffer.baseAddress, av_channel_layout_describe(layout, start, buffer.count) > 0 else {
                return ""
            }
            return String(cString: start)
        }
    }

    /// Pushes a decoded frame, with its timestamp in samples (counted on from the previous frame when it has
    /// none), through the graph and encodes what comes out.
    private func filter(_ frame: borrowing Frame, into output: borrowing OutputContainer) throws(FFmpegError) {
        let decoded = frame.pointer
        let timestamp = decoded.pointee.best_effort_timestamp
        decoded.pointee.pts =
            timestamp == chute_nopts_value()
            ? self.nextSample : av_rescale_q(timestamp, self.streamTimeBase, self.sampleTimeBase)
        self.nextSample = decoded.pointee.pts + Int64(decoded.pointee.nb_samples)
        let rate = Double(self.sampleTimeBase.den)
        self.decodedExtent.include(start: Double(decoded.pointee.pts) / rate, end: Double(self.nextSample) / rate)
        try self.graph.push(frame)
        try self.drainGraph(into: output)
    }

    private func drainGraph(into output: borrowing OutputContainer) throws(FFmpegError) {
        while case .ready = try self.graph.pull(into: self.filtered) {
            defer { self.filtered.unref() }
            if let block = self.nextBlock {
                let frame = self.filtered.pointer
                frame.pointee.pts = block == Int64.min ? frame.pointee.pts : block
                self.nextBlock = frame.pointee.pts + Int64(frame.pointee.nb_samples)
            }
            try self.encoder.send(self.filtered)
            try self.drainEncoder(into: output)
        }
    }

    private func drainEncoder(into output: borrowing OutputContainer) throws(FFmpegError) {
        let timeBase = self.encoder.timeBase
        let streamTimeBase = output.stream(at: self.outputIndex).pointee.time_base
        while case .ready = try self.encoder.receive(into: self.packet) {
            self.packet.pointer.pointee.stream_index = self.outputIndex
            av_packet_rescale_ts(self.packet.pointer, timeBase, streamTimeBase)
            try output.write(self.packet)
        }
    }
}
