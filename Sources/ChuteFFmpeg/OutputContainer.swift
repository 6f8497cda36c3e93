import CFFmpeg

/// Owns one `AVFormatContext` that writes a new ``MediaFile`` through an ``IOContext``.
///
/// The muxer is chosen by name, never guessed from a file name, and cannot open other files: its `io_open` refuses
/// every nested open (no muxer Chute uses needs one; MP4's `faststart`, which would, is not used).
/// The corresponding C functions are `avformat_alloc_output_context2`, `avformat_write_header`,
/// `av_interleaved_write_frame`, `av_write_trailer` and `avformat_free_context`.
struct OutputContainer: ~Copyable {
    /// The last decoding timestamp written to each stream, and how many packets needed theirs repaired.
    ///
    /// A class so that ``write(_:)`` can update it while the container is only borrowed.
    private final class TimestampLog {
        var last: [Int32: Int64] = [:]
        var repaired = 0
        /// Where the furthest packet written so far ends, in seconds, for video and for audio.
        var writtenVideo = 0.0
        var writtenAudio = 0.0
    }

    /// The context.
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The file's writer; freed after the context.
    private let io: IOContext
    private let timestamps = TimestampLog()

    /// Prepares a muxer writing `file`; add streams, then call ``writeHeader()``.
    ///
    /// - Parameters:
    ///   - muxer: the muxer's name, such as `mp4` or `ipod`.
    ///   - fileExtension: the output's usual extension; the muxer only uses it in messages (the MOV family warns
    ///     when a name's extension does not match).
    /// - Throws: ``FFmpegError`` with code `writeOutput`.
    init(file: MediaFile, muxer: String, fileExtension: String) throws(FFmpegError) {
        let io = try IOContext(writing: file)
        var allocated: UnsafeMutablePointer<AVFormatContext>?
        try FFmpegError.check(
            avformat_alloc_output_context2(&allocated, nil, muxer, nil),
            .writeOutput,
            "avformat_alloc_output_context2"
        )
        guard let context = allocated else {
            throw FFmpegError(.writeOutput, "avformat_alloc_output_context2", status: chute_averror(ENOMEM))
        }
        context.pointee.url = av_strdup("output.\(fileExtension)")
        context.pointee.pb = io.context
        // Bit-exact: no `encoder` tag naming libavformat (an ID3 `TSSE` frame, a Vorbis comment, an MP4 `©too`), no
        // random identifiers and no muxing time; the sidecar records the libraries that wrote the file.
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO | AVFMT_FLAG_BITEXACT
        context.pointee.io_open = { _, _, _, _, _ in chute_averror(EPERM) }
        // Written out when the buffer is full, not after each packet (libavformat's default for a seekable output
        // it did not open): a remux otherwise makes a system call per packet.
        context.pointee.flush_packets = 0
        self.context = context
        self.io = io
    }

    deinit {
        // The context does not own its custom IOContext, which is freed after it.
        avformat_free_context(self.context)
    }

    /// The muxer, which says what codecs and features it takes.
    var muxer: UnsafePointer<AVOutputFormat> {
        self.context.pointee.oformat
    }

    /// Whether encoders must put their headers in the stream parameters (`AVFMT_GLOBALHEADER`).
    var needsGlobalHeader: Bool {
        self.muxer.pointee.flags & AVFMT_GLOBALHEADER != 0
    }

    /// Adds a stream. The corresponding C function is `avformat_new_stream`.
    ///
    /// - Returns: the stream, whose parameters the caller fills.
    func addStream() throws(FFmpegError) -> UnsafeMutablePointer<AVStream> {
        guard let stream = avformat_new_stream(self.context, nil) else {
            throw FFmpegError(.writeOutput, "avformat_new_stream", status: chute_averror(ENOMEM))
        }
        return stream
    }

    /// The stream at `index`.
    func stream(at index: Int32) -> UnsafeMutablePointer<AVStream> {
        self.context.pointee.streams[Int(index)]!
    }

    /// Adds a stream with `stream`'s parameters, for its packets copied unchanged: its codec parameters, time base,
    /// disposition, aspect ratio, frame rates and tags, and `matrix` attached where given. The corresponding C
    /// function is `avcodec_parameters_copy`.
    ///
    /// - Parameter codecTag: the tag for the codec in this container; `nil` lets the muxer pick its own, since the
    ///   input container's tag may mean nothing in this one.
    /// - Throws: ``FFmpegError`` with code `writeOutput`.
    func addCopy(
        of stream: UnsafeMutablePointer<AVStream>,
        codecTag: UInt32?,
        matrix: DisplayMatrix?
    ) throws(FFmpegError) -> UnsafeMutablePointer<AVStream> {
        let copy = try self.addStream()
        try FFmpegError.check(
            avcodec_parameters_copy(copy.pointee.codecpar, stream.pointee.codecpar),
            .writeOutput,
            "avcodec_parameters_copy"
        )
        copy.pointee.codecpar.pointee.codec_tag = codecTag ?? 0
        copy.pointee.time_base = stream.pointee.time_base
        copy.pointee.disposition = stream.pointee.disposition
        copy.pointee.sample_aspect_ratio = stream.pointee.sample_aspect_ratio
        copy.pointee.avg_frame_rate = stream.pointee.avg_frame_rate
        copy.pointee.r_frame_rate = stream.pointee.r_frame_rate
        TagCopy.copy(from: stream.pointee.metadata, to: &copy.pointee.metadata)
        try matrix?.attach(to: copy)
        return copy
    }

    /// Copies the input's tags (title, artist, album, …) to the container, leaving out the source container's
    /// bookkeeping (see ``TagCopy``).
    ///
    /// Ogg and Opus files keep their tags on the audio stream rather than the container, and the mp3, m4a, flac and
    /// wav muxers write only container tags; so the tags of `stream`, the audio an audio target keeps, are added too,
    /// where the container has no tag of that name.
    func copyTags(from input: borrowing InputContainer, stream: Int?) {
        // The MOV family (mov, mp4, ipod for m4a) writes `creation_time` into its movie header as a date.
        let keepsCreationTime = ["mov", "mp4", "ipod"].contains(String(cString: self.muxer.pointee.name))
        TagCopy.copy(
            from: input.context.pointee.metadata,
            to: &self.context.pointee.metadata,
            keepsCreationTime: keepsCreationTime
        )
        if let stream {
            TagCopy.copy(
                from: input.stream(at: stream).pointee.metadata,
                to: &self.context.pointee.metadata,
                overwrite: false,
                keepsCreationTime: keepsCreationTime
            )
        }
    }

    /// Writes the container's header; stream time bases may change here (MP4 picks its own).
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput`, for instance when a codec does not fit the container.
    func writeHeader() throws(FFmpegError) {
        try FFmpegError.check(avformat_write_header(self.context, nil), .writeOutput, "avformat_write_header")
    }

    /// How many packets had timestamps that the muxer would have refused, and were repaired.
    var repairedTimestamps: Int {
        self.timestamps.repaired
    }

    /// How much of the media has been written, in seconds: where the furthest video packet ends, or the furthest
    /// audio packet when there is no video (cover pictures and subtitles left out). Unlike how far the input has been
    /// read, this counts only what the encoders have given out, not the frames they hold for their look-ahead; the
    /// video, slower to encode than the audio that is written beside it, is what the job waits for.
    var writtenSeconds: Double {
        let video = (0..<Int32(self.context.pointee.nb_streams)).contains { index in
            let stream = self.stream(at: index)
            return stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_VIDEO
                && stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        }
        return video ? self.timestamps.writtenVideo : self.timestamps.writtenAudio
    }

    /// Writes a packet, in the stream's time base, interleaving it with the other streams; the muxer takes the
    /// packet's data and leaves `packet` empty.
    ///
    /// Timestamps that muxers refuse are repaired first, as the `ffmpeg` CLI does: a decoding time after the
    /// presentation time is replaced by the median of the two and the next free tick, and a decoding time that does
    /// not increase is moved to the next free tick (damaged files and some phones write such packets).
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` (a full disk, or timestamps the container refuses).
    func write(_ packet: borrowing Packet) throws(FFmpegError) {
        try self.write(packet: packet.pointer)
    }

    /// Writes the packet at `target`, as ``write(_:)`` does.
    func write(packet target: UnsafeMutablePointer<AVPacket>) throws(FFmpegError) {
        let index = target.pointee.stream_index
        let none = chute_nopts_value()
        // Matroska accepts equal decoding times (AVFMT_TS_NONSTRICT); the others want them to increase.
        let step: Int64 = self.muxer.pointee.flags & AVFMT_TS_NONSTRICT != 0 ? 0 : 1
        if target.pointee.dts != none {
            let pts = target.pointee.pts
            let dts = target.pointee.dts
            let next = self.timestamps.last[index].map { $0 + step }
            if pts != none, dts > pts {
                // Without an earlier packet the median is the smaller of the two.
                let median = next.map { pts + dts + $0 - min(pts, dts, $0) - max(pts, dts, $0) } ?? pts
                target.pointee.pts = median
                target.pointee.dts = median
                self.timestamps.repaired += 1
            } else if let next, dts < next {
                if pts != none, pts >= dts {
                    target.pointee.pts = max(pts, next)
                }
                target.pointee.dts = next
                self.timestamps.repaired += 1
            }
        }
        if target.pointee.dts != none {
            self.timestamps.last[index] = target.pointee.dts
        }
        let stream = self.stream(at: index)
        let type = stream.pointee.codecpar.pointee.codec_type
        if type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO,
            stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0, target.pointee.pts != none
        {
            let end = Double(target.pointee.pts + max(0, target.pointee.duration)) * av_q2d(stream.pointee.time_base)
            if type == AVMEDIA_TYPE_VIDEO {
                self.timestamps.writtenVideo = max(self.timestamps.writtenVideo, end)
            } else {
                self.timestamps.writtenAudio = max(self.timestamps.writtenAudio, end)
            }
        }
        try FFmpegError.check(
            av_interleaved_write_frame(self.context, target),
            .writeOutput,
            "av_interleaved_write_frame"
        )
    }

    /// Writes the rest of the interleaving queue and the trailer (MP4's index, Matroska's cues), then flushes.
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput`.
    consuming func finish() throws(FFmpegError) {
        try FFmpegError.check(av_write_trailer(self.context), .writeOutput, "av_write_trailer")
        try self.io.flush()
    }
}
