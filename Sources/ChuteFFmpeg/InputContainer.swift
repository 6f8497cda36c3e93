import CFFmpeg
import ChuteCore

/// Owns one `AVFormatContext` opened for reading, with the limits that keep hostile files in their box.
///
/// The file is read through an ``IOContext`` on an already open descriptor, so libavformat never resolves a name.
/// Only the demuxers of real media files are allowed (``demuxers``): playlists and scripts (`hls`, `dash`, `concat`,
/// `image2`, `tty`, `ffmetadata`, `lavfi`, …) are refused even when their content is detected. Every nested open, the
/// way playlists and QuickTime references reach other files, is refused by the `io_open` callback, and the protocol
/// whitelist is `file` for good measure. Probing is bounded in bytes, time and streams.
///
/// No `interrupt_callback` is installed: a job's time limit is enforced by the supervisor, which kills the worker
/// process, and reading a regular file never blocks indefinitely.
///
/// The corresponding C functions are `av_probe_input_buffer2`, `avformat_open_input`, `avformat_find_stream_info` and
/// `avformat_close_input`.
struct InputContainer: ~Copyable {
    /// The demuxers Chute allows, as `format_whitelist` takes them (names from `ffmpeg -demuxers`).
    static let demuxers = [
        "mov", "mp4", "m4a", "3gp", "3g2", "mj2", "matroska", "webm", "avi", "flv", "mpegts", "mpeg", "asf", "ogg",
        "mp3", "flac", "wav", "aiff", "aac", "amr", "amrnb", "amrwb", "ac3", "eac3", "ape", "wv", "mpc", "mpc8",
        "dsf", "caf", "w64",
    ]
    /// How many bytes probing may read to find the streams' parameters.
    static let probeBytes = 10_000_000
    /// How much media, in microseconds, probing may read to find the streams' parameters.
    static let probeMicroseconds = 10_000_000
    /// The most streams an input may have.
    static let streamLimit = 64

    /// The context.
    let context: UnsafeMutablePointer<AVFormatContext>
    /// The file's reader; freed after the context, which refers to it.
    private let io: IOContext

    /// Opens `file` and reads enough of it to know its streams.
    ///
    /// - Parameters:
    ///   - file: the file.
    ///   - demuxer: for an output Chute wrote, the demuxer of its format, which is used without probing (raw formats
    ///     such as GSM cannot be recognised from their content); `nil` for an input, which is probed and must be in
    ///     ``demuxers``.
    ///   - findsStreams: whether to read on past the header to find the streams' parameters
    ///     (`avformat_find_stream_info`); only for an output whose header declares them and whose reader does not
    ///     need what the decoders would find (their delay, the pixel format) may it be `false`.
    /// - Throws: ``FFmpegError`` with code `openInput` when the container is not one Chute reads, or is damaged.
    init(file: MediaFile, demuxer: String? = nil, findsStreams: Bool = true) throws(FFmpegError) {
        let io = try IOContext(reading: file)
        let demuxers = (Self.demuxers + (demuxer.map { [$0] } ?? [])).joined(separator: ",")
        let format: UnsafePointer<AVInputFormat>
        if let demuxer {
            format = try Self.demuxer(named: demuxer)
        } else {
            format = try Self.probe(io)
        }
        self.context = try Self.open(format, io: io, demuxers: demuxers, findsStreams: findsStreams)
        self.io = io
    }

    /// The demuxer of an output's format. The corresponding C function is `av_find_input_format`.
    private static func demuxer(named name: String) throws(FFmpegError) -> UnsafePointer<AVInputFormat> {
        guard let format = av_find_input_format(name) else {
            throw FFmpegError(
                .openInput,
                "av_find_input_format",
                status: chute_averror_demuxer_not_found(),
                detail: "this FFmpeg has no \(name) demuxer"
            )
        }
        return format
    }

    /// Finds the demuxer for an input's content, which must be one Chute allows.
    private static func probe(_ io: borrowing IOContext) throws(FFmpegError) -> UnsafePointer<AVInputFormat> {
        // Probed here rather than inside avformat_open_input (which runs the same probe), so that content in a format
        // Chute refuses is named and refused as such instead of failing like a damaged file: a playlist behind an
        // ID3 tag passes the magic-byte check as MP3, and FFmpeg's probe skips the tag and finds `hls`.
        var format: UnsafePointer<AVInputFormat>?
        try FFmpegError.check(
            av_probe_input_buffer2(io.context, &format, "", nil, 0, 0),
            .openInput,
            "av_probe_input_buffer2"
        )
        guard let format else {
            throw FFmpegError(.openInput, "av_probe_input_buffer2", status: chute_averror_invaliddata())
        }
        // A demuxer's name lists the formats it serves (`mov,mp4,m4a,3gp,3g2,mj2`); one allowed is enough, as for
        // format_whitelist.
        let name = String(cString: format.pointee.name)
        guard name.split(separator: ",").contains(where: { Self.demuxers.contains(String($0)) }) else {
            let longName = format.pointee.long_name.map { " (\(String(cString: $0)))" } ?? ""
            throw FFmpegError(
                .openInput,
                "av_probe_input_buffer2",
                status: chute_averror_demuxer_not_found(),
                detail: "the content is \(name)\(longName), not a format Chute reads; no demuxer was opened for it"
            )
        }
        return format
    }

    /// Opens the container with `format` and, with `findsStreams`, reads on to find its streams' parameters, within
    /// the limits.
    private static func open(
        _ format: UnsafePointer<AVInputFormat>,
        io: borrowing IOContext,
        demuxers: String,
        findsStreams: Bool
    ) throws(FFmpegError) -> UnsafeMutablePointer<AVFormatContext> {
        guard let allocated = avformat_alloc_context() else {
            throw FFmpegError(.openInput, "avformat_alloc_context", status: chute_averror(ENOMEM))
        }
        allocated.pointee.pb = io.context
        allocated.pointee.io_open = { _, _, _, _, _ in chute_averror(EPERM) }
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        let settings = [
            ("format_whitelist", demuxers), ("protocol_whitelist", "file"),
            ("probesize", String(Self.probeBytes)), ("analyzeduration", String(Self.probeMicroseconds)),
            ("max_streams", String(Self.streamLimit)),
            // QuickTime external data references stay off (FFmpeg's default), whatever a file asks for.
            ("enable_drefs", "0"), ("use_absolute_path", "0"),
        ]
        for (key, value) in settings {
            av_dict_set(&options, key, value, 0)
        }
        var opened: UnsafeMutablePointer<AVFormatContext>? = allocated
        // On failure avformat_open_input frees the context and sets it to nil; the IOContext is ours to free.
        try FFmpegError.check(avformat_open_input(&opened, nil, format, &options), .openInput, "avformat_open_input")
        guard let context = opened else {
            throw FFmpegError(.openInput, "avformat_open_input", status: chute_averror_invaliddata())
        }
        let status = findsStreams ? avformat_find_stream_info(context, nil) : 0
        if status < 0 {
            var closing: UnsafeMutablePointer<AVFormatContext>? = context
            avformat_close_input(&closing)
            throw FFmpegError(
                .openInput,
                "avformat_find_stream_info",
                status: status,
                detail: FFmpegLog.takeLastError()
            )
        }
        return context
    }

    deinit {
        var context: UnsafeMutablePointer<AVFormatContext>? = self.context
        avformat_close_input(&context)
    }

    /// The demuxer's name, such as `mov,mp4,m4a,3gp,3g2,mj2`.
    var formatName: String {
        String(cString: self.context.pointee.iformat.pointee.name)
    }

    /// The number of streams.
    var streamCount: Int {
        Int(self.context.pointee.nb_streams)
    }

    /// The stream at `index`, which must be below ``streamCount``.
    func stream(at index: Int) -> UnsafeMutablePointer<AVStream> {
        self.context.pointee.streams[index]!
    }

    /// The first timestamp of the file in microseconds, `0` when unknown.
    var startMicroseconds: Int64 {
        let start = self.context.pointee.start_time
        return start == chute_nopts_value() ? 0 : start
    }

    /// The duration the container declares in seconds, or `nil` when it declares none or only guessed it from the
    /// bitrate (as MPEG-TS, MPEG-PS, AC-3 and MP3 without a Xing header do).
    var declaredDuration: Double? {
        let duration = self.context.pointee.duration
        let method = self.context.pointee.duration_estimation_method
        guard duration != chute_nopts_value(), duration > 0, method != AVFMT_DURATION_FROM_BITRATE else { return nil }
        return Double(duration) / Double(AV_TIME_BASE)
    }

    /// When the clip was taken: the container's `creation_time` (QuickTime's and MP4's `mvhd`, Matroska's
    /// `DateUTC`), else the first stream's; `nil` when none is there, or only the epoch that muxers write for
    /// "unknown".
    ///
    /// The corresponding C function is `av_dict_get`.
    var captureTime: CaptureTime? {
        let dictionaries =
            [self.context.pointee.metadata] + (0..<self.streamCount).map { self.stream(at: $0).pointee.metadata }
        for dictionary in dictionaries {
            guard let entry = av_dict_get(dictionary, "creation_time", nil, 0), let value = entry.pointee.value else {
                continue
            }
            if let time = CaptureTime(utc: String(cString: value), origin: "QuickTime creation_time") { return time }
        }
        return nil
    }

    /// Reads the next packet into `packet`.
    ///
    /// The corresponding C function is `av_read_frame`.
    ///
    /// - Returns: `false` at the end of the file.
    /// - Throws: ``FFmpegError`` with code `decode` when the container is damaged or ends before its index says.
    func read(into packet: borrowing Packet) throws(FFmpegError) -> Bool {
        let status = av_read_frame(self.context, packet.pointer)
        if status == chute_averror_eof() { return false }
        try FFmpegError.check(status, .decode, "av_read_frame")
        return true
    }

    /// The timestamp of the last keyframe of a stream at or before a time, in the stream's time base; `nil` when the
    /// stream has none there. It leaves the reading position anywhere: seek before reading on.
    ///
    /// The corresponding C functions are `av_seek_frame` with `AVSEEK_FLAG_BACKWARD` and `av_read_frame`.
    ///
    /// - Parameters:
    ///   - ticks: the time, in `timeBase`, on the input's clock.
    ///   - streamIndex: the video stream.
    /// - Throws: ``FFmpegError`` with code `decode` when the file cannot seek or read there.
    func keyframe(atOrBefore ticks: Int64, timeBase: AVRational, streamIndex: Int) throws(FFmpegError) -> Int64? {
        let stream = self.stream(at: streamIndex)
        let target = av_rescale_q(ticks, timeBase, stream.pointee.time_base)
        try FFmpegError.check(
            av_seek_frame(self.context, Int32(streamIndex), target, AVSEEK_FLAG_BACKWARD),
            .decode,
            "av_seek_frame"
        )
        let packet = try Packet()
        while try self.read(into: packet) {
            defer { packet.unref() }
            let read = packet.pointer.pointee
            guard Int(read.stream_index) == streamIndex, read.pts != chute_nopts_value() else { continue }
            // The first packet of the stream after a backward seek is the keyframe; a demuxer that lands a little
            // late is asked for the first keyframe it gives.
            if read.flags & AV_PKT_FLAG_KEY != 0 { return read.pts }
        }
        return nil
    }

    /// Moves every stream to its last keyframe at or before a time (in `timeBase`, on the input's clock).
    ///
    /// The corresponding C function is `av_seek_frame` with `AVSEEK_FLAG_BACKWARD`.
    ///
    /// - Throws: ``FFmpegError`` with code `decode` when the file cannot seek there.
    func seek(toTicks ticks: Int64, timeBase: AVRational) throws(FFmpegError) {
        // Rounded up, so that a keyframe's own time lands on it rather than on the one before.
        let target = av_rescale_q_rnd(ticks, timeBase, chute_time_base_q(), AV_ROUND_UP)
        try FFmpegError.check(av_seek_frame(self.context, -1, target, AVSEEK_FLAG_BACKWARD), .decode, "av_seek_frame")
    }

    /// Moves to the last keyframe at or before `seconds` after the start.
    ///
    /// The corresponding C function is `av_seek_frame` with `AVSEEK_FLAG_BACKWARD`.
    ///
    /// - Throws: ``FFmpegError`` with code `verify` when the file cannot seek there.
    func seek(toSeconds seconds: Double) throws(FFmpegError) {
        let target = self.startMicroseconds + Int64(seconds * Double(AV_TIME_BASE))
        try FFmpegError.check(av_seek_frame(self.context, -1, target, AVSEEK_FLAG_BACKWARD), .verify, "av_seek_frame")
    }
}
