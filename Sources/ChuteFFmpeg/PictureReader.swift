import CFFmpeg

/// Owns one `AVFormatContext` that reads back a picture Chute wrote from a video (a poster frame or a sticker), with
/// the demuxer of its format named rather than probed.
///
/// Only for Chute's own outputs: inputs go through ``InputContainer``, whose demuxers are those of media files. Like
/// it, the context reads through an ``IOContext`` and cannot open another file. The corresponding C functions are
/// `av_find_input_format`, `avformat_open_input`, `avformat_find_stream_info` and `avformat_close_input`.
struct PictureReader: ~Copyable {
    /// The demuxer that reads a picture format back, or `nil` where FFmpeg 5.1 cannot decode it (an animated WebP:
    /// its WebP decoder takes still pictures only).
    static func demuxer(for format: String, animated: Bool) -> String? {
        switch format {
        case "jpg": "jpeg_pipe"
        case "png": "png_pipe"
        case "webp": animated ? nil : "webp_pipe"
        case "gif": "gif"
        default: nil
        }
    }

    private let context: UnsafeMutablePointer<AVFormatContext>
    /// The file's reader; freed after the context.
    private let io: IOContext

    /// Opens `file` with the demuxer named `demuxer`.
    ///
    /// - Throws: ``FFmpegError`` with code `verify` when the picture cannot be opened.
    init(file: MediaFile, demuxer: String) throws(FFmpegError) {
        let io = try IOContext(reading: file)
        guard let format = av_find_input_format(demuxer), let allocated = avformat_alloc_context() else {
            throw FFmpegError(.verify, "av_find_input_format", status: chute_averror_demuxer_not_found())
        }
        allocated.pointee.pb = io.context
        allocated.pointee.io_open = { _, _, _, _, _ in chute_averror(EPERM) }
        var opened: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and sets it to nil; the IOContext is ours to free.
        try FFmpegError.check(avformat_open_input(&opened, nil, format, nil), .verify, "avformat_open_input")
        guard let context = opened else {
            throw FFmpegError(.verify, "avformat_open_input", status: chute_averror_invaliddata())
        }
        let status = avformat_find_stream_info(context, nil)
        guard status >= 0, context.pointee.nb_streams == 1 else {
            var closing: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&closing)
            throw FFmpegError(.verify, "avformat_find_stream_info", status: min(status, chute_averror_invaliddata()))
        }
        self.context = context
        self.io = io
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = self.context
        avformat_close_input(&context)
    }

    /// Decodes every frame and checks each is `width` × `height`.
    ///
    /// - Returns: the number of frames.
    /// - Throws: ``FFmpegError`` with code `verify` when a frame does not decode or has another size.
    func decodeAll(width: Int32, height: Int32) throws(FFmpegError) -> Int {
        let decoder = try Decoder(stream: self.context.pointee.streams[0]!)
        let packet = try Packet()
        let frame = try Frame()
        var tally = DecodeTally(streamIndex: 0, codecName: "picture")
        var frames = 0
        func check(_ decoded: borrowing Frame) throws(FFmpegError) {
            guard decoded.pointer.pointee.width == width, decoded.pointer.pointee.height == height else {
                throw FFmpegError(
                    .verify,
                    "avcodec_receive_frame",
                    detail: "frame \(frames + 1) of the picture read back is "
                        + "\(decoded.pointer.pointee.width)x\(decoded.pointer.pointee.height), not \(width)x\(height)"
                )
            }
            frames += 1
        }
        while true {
            let status = av_read_frame(self.context, packet.pointer)
            if status == chute_averror_eof() { break }
            try FFmpegError.check(status, .verify, "av_read_frame")
            defer { packet.unref() }
            try decoder.decode(packet, into: frame, tally: &tally, handle: check)
        }
        try decoder.finish(into: frame, tally: &tally, handle: check)
        guard tally.errors == 0 else {
            throw FFmpegError(
                .verify,
                "avcodec_send_packet",
                detail: "the picture read back does not decode: \(tally.firstError ?? "\(tally.errors) errors")"
            )
        }
        return frames
    }
}
