import CFFmpeg

/// Owns one `AVCodecContext` that encodes one output stream.
///
/// The corresponding C functions are `avcodec_find_encoder_by_name`, `avcodec_open2` and `avcodec_free_context`.
struct Encoder: ~Copyable {
    /// The context.
    let context: UnsafeMutablePointer<AVCodecContext>

    /// The first of `names` that this FFmpeg has, such as `libsvtav1` before `libaom-av1`.
    /// The corresponding C function is `avcodec_find_encoder_by_name`.
    ///
    /// - Parameter purpose: what the encoder is for, for the message ("av1 video").
    /// - Throws: ``FFmpegError`` with code `encoderUnavailable` when it has none of them.
    static func find(_ names: [String], for purpose: String) throws(FFmpegError) -> UnsafePointer<AVCodec> {
        for name in names {
            if let codec = avcodec_find_encoder_by_name(name) { return codec }
        }
        throw FFmpegError(
            .encoderUnavailable,
            "avcodec_find_encoder_by_name",
            status: chute_averror_encoder_not_found(),
            detail: "this FFmpeg has no encoder for \(purpose) (looked for \(names.joined(separator: ", ")))"
        )
    }

    /// Configures and opens an encoder.
    ///
    /// - Parameters:
    ///   - codec: the encoder, from ``find(_:for:)``.
    ///   - globalHeader: whether the container wants the codec's headers once, in the stream parameters
    ///     (`AVFMT_GLOBALHEADER`), rather than in the packets.
    ///   - options: the encoder's own options (`preset`, `crf`, …); each must be one the encoder knows.
    ///   - configure: sets the context's fields (size, formats, time base, bitrate) before it is opened.
    /// - Throws: ``FFmpegError`` with code `encode` when the encoder refuses the settings.
    init(
        codec: UnsafePointer<AVCodec>,
        globalHeader: Bool,
        options: [(String, String)] = [],
        configure: (UnsafeMutablePointer<AVCodecContext>) -> Void
    ) throws(FFmpegError) {
        guard let context = avcodec_alloc_context3(codec) else {
            throw FFmpegError(.encode, "avcodec_alloc_context3", status: chute_averror(ENOMEM))
        }
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        configure(context)
        if globalHeader {
            context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        }
        var dictionary: OpaquePointer?
        defer { av_dict_free(&dictionary) }
        for (key, value) in options {
            av_dict_set(&dictionary, key, value, 0)
        }
        let status = avcodec_open2(context, codec, &dictionary)
        if status < 0 {
            let detail = FFmpegLog.takeLastError()
            avcodec_free_context(&owned)
            throw FFmpegError(.encode, "avcodec_open2", status: status, detail: detail)
        }
        // avcodec_open2 leaves the options it did not use in the dictionary: that is a bug in Chute's settings.
        if let unused = av_dict_get(dictionary, "", nil, AV_DICT_IGNORE_SUFFIX) {
            let name = String(cString: unused.pointee.key)
            avcodec_free_context(&owned)
            throw FFmpegError(
                .encode,
                "avcodec_open2",
                status: chute_averror(EINVAL),
                detail: "\(String(cString: codec.pointee.name)) has no option '\(name)'"
            )
        }
        self.context = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
    }

    /// Hands the encoder a frame. The corresponding C function is `avcodec_send_frame`.
    ///
    /// - Throws: ``FFmpegError`` with code `encode`.
    func send(_ frame: borrowing Frame) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_frame(self.context, frame.pointer), .encode, "avcodec_send_frame")
    }

    /// Tells the encoder that no frame follows, so that it gives out the packets it still holds.
    func sendEndOfStream() throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_frame(self.context, nil), .encode, "avcodec_send_frame")
    }

    /// Takes the next encoded packet into `packet`. The corresponding C function is `avcodec_receive_packet`.
    ///
    /// - Throws: ``FFmpegError`` with code `encode`.
    func receive(into packet: borrowing Packet) throws(FFmpegError) -> CodecOutput {
        let status = avcodec_receive_packet(self.context, packet.pointer)
        if status == chute_averror(EAGAIN) { return .needsInput }
        if status == chute_averror_eof() { return .finished }
        try FFmpegError.check(status, .encode, "avcodec_receive_packet")
        return .ready
    }
}
