import CFFmpeg

/// Owns one `AVCodecContext` that decodes one input stream.
///
/// The decoder is told the stream's time base, uses the threads ``CodecThreads`` gives it, and refuses frames larger
/// than ``pixelLimit``, which the stream's header is checked against first.
/// The corresponding C functions are `avcodec_find_decoder`, `avcodec_open2` and `avcodec_free_context`.
struct Decoder: ~Copyable {
    /// The most pixels a decoded picture may have: 8192 × 8192 (8K UHD is 7680 × 4320). One frame of a picture
    /// this size already takes 100 MB, and every decoder thread holds several.
    static let pixelLimit = 8192 * 8192

    /// The context.
    let context: UnsafeMutablePointer<AVCodecContext>

    /// Opens a decoder for `stream`.
    ///
    /// - Parameter threads: its `thread_count`, or `nil` for what ``CodecThreads`` gives decoders.
    /// - Throws: ``FFmpegError`` with code `unsupportedStream` when this FFmpeg has no decoder for the codec,
    ///   `limitExceeded` when a picture is larger than ``pixelLimit``, or `decode` when the decoder cannot start.
    init(stream: UnsafeMutablePointer<AVStream>, threads: Int32? = nil) throws(FFmpegError) {
        let parameters = stream.pointee.codecpar!
        let codecName = String(cString: avcodec_get_name(parameters.pointee.codec_id))
        let pixels = Int(parameters.pointee.width) * Int(parameters.pointee.height)
        guard pixels <= Self.pixelLimit else {
            throw FFmpegError(
                .limitExceeded,
                "max_pixels",
                detail: "the \(codecName) stream is \(parameters.pointee.width)x\(parameters.pointee.height) pixels; "
                    + "the limit is \(Self.pixelLimit) pixels per frame"
            )
        }
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw FFmpegError(
                .unsupportedStream,
                "avcodec_find_decoder",
                status: chute_averror_decoder_not_found(),
                detail: "stream #\(stream.pointee.index) is \(codecName), which this FFmpeg cannot decode"
            )
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw FFmpegError(.decode, "avcodec_alloc_context3", status: chute_averror(ENOMEM))
        }
        var owned: UnsafeMutablePointer<AVCodecContext>? = context
        var status = avcodec_parameters_to_context(context, parameters)
        if status >= 0 {
            context.pointee.pkt_timebase = stream.pointee.time_base
            context.pointee.max_pixels = Int64(Self.pixelLimit)
            context.pointee.thread_count = threads ?? CodecThreads.decoder
            status = avcodec_open2(context, codec, nil)
        }
        if status < 0 {
            let detail = FFmpegLog.takeLastError()
            avcodec_free_context(&owned)
            throw FFmpegError(.decode, "avcodec_open2", status: status, detail: detail)
        }
        self.context = context
    }

    deinit {
        var context: UnsafeMutablePointer<AVCodecContext>? = self.context
        avcodec_free_context(&context)
    }

    /// Hands the decoder a packet. The corresponding C function is `avcodec_send_packet`.
    ///
    /// - Throws: ``FFmpegError`` with code `decode` when the packet is damaged.
    func send(_ packet: borrowing Packet) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_packet(self.context, packet.pointer), .decode, "avcodec_send_packet")
    }

    /// Tells the decoder that no packet follows, so that it gives out the frames it still holds.
    func sendEndOfStream() throws(FFmpegError) {
        let status = avcodec_send_packet(self.context, nil)
        // A second end of stream (after a flush) is harmless.
        if status != chute_averror_eof() {
            try FFmpegError.check(status, .decode, "avcodec_send_packet")
        }
    }

    /// Takes the next decoded frame into `frame`. The corresponding C function is `avcodec_receive_frame`.
    ///
    /// - Throws: ``FFmpegError`` with code `decode` when decoding failed.
    func receive(into frame: borrowing Frame) throws(FFmpegError) -> CodecOutput {
        let status = avcodec_receive_frame(self.context, frame.pointer)
        if status == chute_averror(EAGAIN) { return .needsInput }
        if status == chute_averror_eof() { return .finished }
        try FFmpegError.check(status, .decode, "avcodec_receive_frame")
        return .ready
    }

    /// Decodes `packet` and hands each frame that comes out to `handle`; a damaged packet is counted in `tally`.
    ///
    /// - Parameters:
    ///   - packet: the next packet of the stream.
    ///   - frame: scratch space for the decoded frames.
    ///   - tally: the stream's counts.
    ///   - handle: takes each frame; what it leaves in the frame is dropped afterwards.
    /// - Throws: whatever `handle` throws.
    func decode(
        _ packet: borrowing Packet,
        into frame: borrowing Frame,
        tally: inout DecodeTally,
        handle: (borrowing Frame) throws(FFmpegError) -> Void
    ) throws(FFmpegError) {
        tally.packets += 1
        do {
            try self.send(packet)
        } catch {
            tally.record(error)
        }
        try self.drain(into: frame, tally: &tally, untilEnd: false, handle: handle)
    }

    /// Sends the end of the stream and hands every frame the decoder still holds to `handle`.
    func finish(
        into frame: borrowing Frame,
        tally: inout DecodeTally,
        handle: (borrowing Frame) throws(FFmpegError) -> Void
    ) throws(FFmpegError) {
        do {
            try self.sendEndOfStream()
        } catch {
            tally.record(error)
            return
        }
        try self.drain(into: frame, tally: &tally, untilEnd: true, handle: handle)
    }

    /// Takes frames until the decoder wants input (or, `untilEnd`, until it is empty).
    private func drain(
        into frame: borrowing Frame,
        tally: inout DecodeTally,
        untilEnd: Bool,
        handle: (borrowing Frame) throws(FFmpegError) -> Void
    ) throws(FFmpegError) {
        // A threaded decoder reports a damaged frame when it is received; the frames behind it still come out.
        // Bounded, so that a decoder that keeps failing cannot keep this loop going.
        var failures = 0
        while failures < 64 {
            let output: CodecOutput
            do {
                output = try self.receive(into: frame)
            } catch {
                tally.record(error)
                failures += 1
                if untilEnd { continue }
                return
            }
            guard case .ready = output else { return }
            tally.frames += 1
            try handle(frame)
            frame.unref()
        }
    }

    /// Drops buffered frames after a seek. The corresponding C function is `avcodec_flush_buffers`.
    func flush() {
        avcodec_flush_buffers(self.context)
    }
}
