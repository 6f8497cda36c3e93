import CFFmpeg
import ChuteCatalog

/// Re-encodes one text subtitle stream into the codec the container holds: 3GPP timed text (`mov_text`) for MP4
/// and MOV, WebVTT for WebM, SubRip for Matroska.
///
/// Text decoders turn every format into ASS events, which the text encoders take; timing follows the `ffmpeg`
/// CLI: the event's start is folded into its timestamp and its display time becomes the packet's duration.
/// The corresponding C functions are `avcodec_decode_subtitle2` and `avcodec_encode_subtitle`.
final class SubtitleTranscoder: StreamTranscoder {
    /// The largest encoded event, in bytes (the CLI's limit).
    private static let bufferSize = 1 << 20

    let outputIndex: Int32
    private(set) var tally: DecodeTally
    /// Subtitles do not count towards a file's duration.
    let decodedExtent = TimeExtent()
    let outputSummary: String

    private let decoder: Decoder
    private let encoder: Encoder
    private let packet: Packet
    private let streamTimeBase: AVRational

    /// Sets up decoding and encoding for one stream, and adds its output stream.
    ///
    /// - Throws: ``FFmpegError``: `unsupportedStream` or `decode` for the decoder, `encoderUnavailable`, `encode`.
    init(
        plan: ConversionPlan.Subtitle,
        encoderName: String,
        input: borrowing InputContainer,
        output: borrowing OutputContainer
    ) throws(FFmpegError) {
        let stream = input.stream(at: plan.source.index)
        let decoder = try Decoder(stream: stream)
        let codec = try Encoder.find([encoderName], for: "\(encoderName) subtitles")
        let header = decoder.context.pointee.subtitle_header
        let headerSize = Int(decoder.context.pointee.subtitle_header_size)
        let encoder = try Encoder(codec: codec, globalHeader: output.needsGlobalHeader) { encoder in
            encoder.pointee.time_base = chute_time_base_q()
            // Text encoders need the ASS header the decoder made (styles); the context frees its own copy.
            if let header, headerSize > 0, let copy = av_mallocz(headerSize + 1) {
                copy.copyMemory(from: header, byteCount: headerSize)
                encoder.pointee.subtitle_header = copy.assumingMemoryBound(to: UInt8.self)
                encoder.pointee.subtitle_header_size = Int32(headerSize)
            }
        }
        let outputStream = try output.addStream()
        try FFmpegError.check(
            avcodec_parameters_from_context(outputStream.pointee.codecpar, encoder.context),
            .encode,
            "avcodec_parameters_from_context"
        )
        outputStream.pointee.time_base = encoder.context.pointee.time_base
        outputStream.pointee.disposition = stream.pointee.disposition
        TagCopy.copy(from: stream.pointee.metadata, to: &outputStream.pointee.metadata)

        self.outputIndex = outputStream.pointee.index
        self.tally = DecodeTally(streamIndex: plan.source.index, codecName: plan.source.codecName, isEssential: false)
        self.outputSummary = encoderName
        self.streamTimeBase = stream.pointee.time_base
        self.packet = try Packet()
        self.decoder = decoder
        self.encoder = encoder
    }

    func transcode(_ packet: borrowing Packet, into output: borrowing OutputContainer) throws(FFmpegError) {
        self.tally.packets += 1
        var subtitle = AVSubtitle()
        var gotSubtitle: Int32 = 0
        let status = avcodec_decode_subtitle2(self.decoder.context, &subtitle, &gotSubtitle, packet.pointer)
        guard status >= 0 else {
            self.tally.record(
                FFmpegError(.decode, "avcodec_decode_subtitle2", status: status, detail: FFmpegLog.takeLastError())
            )
            return
        }
        guard gotSubtitle != 0 else { return }
        defer { avsubtitle_free(&subtitle) }
        self.tally.frames += 1
        guard subtitle.num_rects > 0, subtitle.pts != chute_nopts_value() else { return }

        let milliseconds = AVRational(num: 1, den: 1000)
        subtitle.pts += av_rescale_q(Int64(subtitle.start_display_time), milliseconds, chute_time_base_q())
        subtitle.end_display_time -= subtitle.start_display_time
        subtitle.start_display_time = 0
        let encoded = try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.bufferSize) {
            (buffer) throws(FFmpegError) -> Int32 in
            let size = try FFmpegError.check(
                avcodec_encode_subtitle(self.encoder.context, buffer.baseAddress, Int32(buffer.count), &subtitle),
                .encode,
                "avcodec_encode_subtitle"
            )
            guard size > 0 else { return 0 }
            try FFmpegError.check(av_new_packet(self.packet.pointer, size), .encode, "av_new_packet")
            self.packet.pointer.pointee.data.update(from: buffer.baseAddress!, count: Int(size))
            return size
        }
        guard encoded > 0 else { return }
        let streamTimeBase = output.stream(at: self.outputIndex).pointee.time_base
        let target = self.packet.pointer
        target.pointee.pts = av_rescale_q(subtitle.pts, chute_time_base_q(), streamTimeBase)
        target.pointee.dts = target.pointee.pts
        target.pointee.duration = av_rescale_q(Int64(subtitle.end_display_time), milliseconds, streamTimeBase)
        target.pointee.stream_index = self.outputIndex
        try output.write(self.packet)
    }

    /// Text decoders hold nothing back, so there is nothing to drain.
    func finish(into output: borrowing OutputContainer) throws(FFmpegError) {}
}
