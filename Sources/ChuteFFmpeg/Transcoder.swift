import CFFmpeg
import ChuteCatalog
import ChuteCore

/// Reads the input once and sends each packet of a kept stream to its output stream: copied unchanged, or through
/// a ``StreamTranscoder``.
///
/// All timestamps are shifted so that the input's first one becomes 0, as the `ffmpeg` CLI does. Along the way it
/// measures how long the input's audio and video really last, for ``MediaEngine``'s checks.
struct Transcoder {
    /// Where one input stream's packets go.
    private enum Route {
        case copy(outputIndex: Int32)
        case transcode(any StreamTranscoder)
    }

    /// The part of the job that the transcode is, for progress (verification is the rest).
    static let progressShare = 0.0...0.95

    private var routes: [Int: Route] = [:]
    private var clocks: [Int: DecodingClock] = [:]
    /// The bitstream filters of copied streams whose target stores them in another form, by input index.
    private var bitstreamFilters: [Int: BitstreamFilter] = [:]
    /// The re-encoded streams, in output order.
    private(set) var transcoders: [any StreamTranscoder] = []
    /// The video stream's transcoder, when the video is re-encoded.
    private(set) var videoTranscoder: VideoTranscoder?
    /// The packets copied to each output stream, by output index.
    private(set) var copiedPackets: [Int32: Int] = [:]
    /// The span of each input audio and video stream, by input index.
    private(set) var extents: [Int: TimeExtent] = [:]
    /// The rule's `speed`, which divides the output's duration.
    private let speed: Double

    /// Adds the output streams the plan asks for, in order: video, audio, subtitles, cover pictures.
    ///
    /// - Parameter pass: the pass of a two-pass video encode, or `nil`.
    /// - Throws: ``FFmpegError`` when a decoder, filter graph or encoder cannot be set up.
    init(
        plan: ConversionPlan,
        options: ConversionOptions,
        trim: TrimWindow?,
        input: borrowing InputContainer,
        output: borrowing OutputContainer,
        pass: EncodingPass? = nil
    ) throws(FFmpegError) {
        self.speed = options[MediaOptions.speed] ?? 1
        if let video = plan.video {
            let settings = VideoEncoderSettings(
                codec: video.codec,
                options: options,
                format: plan.profile.format,
                pass: pass
            )
            if video.isCopy {
                try self.addCopy(
                    of: video.source,
                    codecTag: settings.codecTag,
                    matrix: video.keptMatrix,
                    input: input,
                    output: output
                )
            } else {
                let transcoder = try VideoTranscoder(
                    plan: video,
                    settings: settings,
                    trim: trim,
                    input: input,
                    output: output
                )
                self.add(transcoder, for: video.source)
                self.videoTranscoder = transcoder
            }
        }
        // The video, when there is one, is the output's first stream.
        let videoFrameRate = plan.video.map { _ in output.stream(at: 0).pointee.avg_frame_rate }
        for audio in plan.audio {
            if audio.isCopy {
                try self.addCopy(of: audio.source, codecTag: nil, matrix: nil, input: input, output: output)
            } else {
                let transcoder = try AudioTranscoder(
                    plan: audio,
                    trim: trim,
                    videoFrameRate: videoFrameRate,
                    input: input,
                    output: output
                )
                self.add(transcoder, for: audio.source)
            }
        }
        for subtitle in plan.subtitles {
            if let encoder = subtitle.encoderName {
                let transcoder = try SubtitleTranscoder(
                    plan: subtitle,
                    encoderName: encoder,
                    input: input,
                    output: output
                )
                self.add(transcoder, for: subtitle.source)
            } else {
                try self.addCopy(of: subtitle.source, codecTag: nil, matrix: nil, input: input, output: output)
            }
        }
        for cover in plan.covers {
            try self.addCopy(of: cover, codecTag: nil, matrix: nil, input: input, output: output)
        }
    }

    /// How many packets of an input stream were copied, or `nil` when it was not copied.
    func copiedPackets(of source: SourceStream) -> Int? {
        guard case .copy(let outputIndex)? = self.routes[source.index] else { return nil }
        return self.copiedPackets[outputIndex]
    }

    private mutating func add(_ transcoder: any StreamTranscoder, for source: SourceStream) {
        self.routes[source.index] = .transcode(transcoder)
        self.transcoders.append(transcoder)
    }

    /// Adds an output stream with the input stream's parameters, for packets copied unchanged.
    private mutating func addCopy(
        of source: SourceStream,
        codecTag: UInt32?,
        matrix: DisplayMatrix?,
        input: borrowing InputContainer,
        output: borrowing OutputContainer
    ) throws(FFmpegError) {
        let stream = input.stream(at: source.index)
        let copy = try output.addCopy(of: stream, codecTag: codecTag, matrix: matrix)
        let muxer = String(cString: output.muxer.pointee.name)
        if let name = BitstreamFilter.name(for: stream.pointee.codecpar, muxer: muxer) {
            let filter = try BitstreamFilter(
                name: name,
                parameters: stream.pointee.codecpar,
                timeBase: stream.pointee.time_base
            )
            // The output stream's header is the filter's (parameter sets in Annex B form), under this container's
            // own tag.
            try FFmpegError.check(
                avcodec_parameters_copy(copy.pointee.codecpar, filter.outputParameters),
                .writeOutput,
                "avcodec_parameters_copy"
            )
            copy.pointee.codecpar.pointee.codec_tag = codecTag ?? 0
            copy.pointee.time_base = filter.outputTimeBase
            self.bitstreamFilters[source.index] = filter
        }
        self.clocks[source.index] = DecodingClock(stream)
        self.routes[source.index] = .copy(outputIndex: copy.pointee.index)
        self.copiedPackets[copy.pointee.index] = 0
    }

    /// Reads every packet of the input (from the trim's start to a little past its end, when the rule trims) and
    /// writes the output's packets, then drains the encoders.
    ///
    /// - Parameters:
    ///   - input: the input, positioned at its start.
    ///   - output: the output, with its header written.
    ///   - trim: the part of the input to keep: its start becomes time 0, and copied packets outside it are left out.
    ///   - inputSize: the input's size in bytes, for progress when the duration is unknown.
    ///   - meter: paces progress reports.
    ///   - progress: the job's progress callback.
    /// - Returns: warnings about concealed decoding errors.
    /// - Throws: ``FFmpegError``: `decode` when the input is damaged or truncated (or a stream does not decode),
    ///   `filter`, `encode` or `writeOutput`.
    mutating func run(
        input: borrowing InputContainer,
        output: borrowing OutputContainer,
        inputSize: Int64,
        trim: TrimWindow?,
        meter: inout ProgressMeter,
        progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> [String] {
        let packet = try Packet()
        let filtered = try Packet()
        let start = trim?.startTicks ?? input.startMicroseconds
        let timeBaseQ = trim?.timeBase ?? chute_time_base_q()
        if let trim, trim.seeks {
            try input.seek(toTicks: trim.startTicks, timeBase: trim.timeBase)
        }
        // Fragmented MP4s declare durations of days, which would hold progress at 0 to the end.
        // Progress is the output written: the trimmed part, which `speed` makes last a fraction of its length.
        let duration =
            (trim?.length
            ?? input.declaredDuration.flatMap {
                $0 < MediaEngine.implausibleDuration ? $0 - (trim?.startSeconds ?? 0) : nil
            }).map { $0 / self.speed }
        while try input.read(into: packet) {
            defer { packet.unref() }
            let index = Int(packet.pointer.pointee.stream_index)
            let stream = input.stream(at: index)
            let timeBase = stream.pointee.time_base
            let offset = av_rescale_q(start, timeBaseQ, timeBase)
            let target = packet.pointer
            if target.pointee.pts != chute_nopts_value() { target.pointee.pts -= offset }
            if target.pointee.dts != chute_nopts_value() { target.pointee.dts -= offset }
            let position = self.measure(target, timeBase: timeBase, stream: stream)
            if let length = trim?.length, let position, position > length + TrimWindow.readingMargin {
                break
            }

            if let duration {
                // Subtitle, data and cover packets have no position on the media's clock; they report nothing
                // rather than a byte-based fraction that would jump back and forth. Progress is what has been
                // written, not read: an encoder takes in dozens of frames before it gives out the first, so the
                // reading runs ahead, by much of a short clip, and the pace measured from it would slow down later.
                if position != nil {
                    let written = output.writtenSeconds
                    meter.report(written / duration, of: Self.progressShare, mediaSeconds: written, to: progress)
                }
            } else if inputSize > 0 {
                meter.report(
                    Double(avio_tell(input.context.pointee.pb)) / Double(inputSize),
                    of: Self.progressShare,
                    to: progress
                )
            }

            switch self.routes[index] {
            case .copy(let outputIndex)?:
                self.clocks[index]?.fill(target)
                if let trim, !Self.isWithin(trim, target, timeBase: timeBase) {
                    continue
                }
                target.pointee.stream_index = outputIndex
                target.pointee.pos = -1
                guard let filter = self.bitstreamFilters[index] else {
                    av_packet_rescale_ts(target, timeBase, output.stream(at: outputIndex).pointee.time_base)
                    self.copiedPackets[outputIndex, default: 0] += 1
                    try output.write(packet)
                    continue
                }
                try filter.send(target)
                try self.writeFiltered(filter, scratch: filtered, outputIndex: outputIndex, output: output)
            case .transcode(let transcoder)?:
                // Decoders of sound and pictures need every packet (the trim filters cut their frames); a subtitle
                // stands alone, and one outside the trim is left out as a copied packet is.
                if let trim, stream.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE,
                    !Self.isWithin(trim, target, timeBase: timeBase)
                {
                    continue
                }
                try transcoder.transcode(packet, into: output)
            case nil:
                continue
            }
        }
        for (index, filter) in self.bitstreamFilters {
            guard case .copy(let outputIndex)? = self.routes[index] else { continue }
            try filter.send(nil)
            try self.writeFiltered(filter, scratch: filtered, outputIndex: outputIndex, output: output)
        }
        var warnings: [String] = []
        for transcoder in self.transcoders {
            try transcoder.finish(into: output)
            if let warning = try transcoder.tally.verdict() {
                warnings.append(warning)
            }
            if let length = transcoder.decodedExtent.length, length > 0 {
                self.extents[transcoder.tally.streamIndex, default: TimeExtent()].include(transcoder.decodedExtent)
            }
        }
        return warnings
    }

    /// Writes the packets a copied stream's bitstream filter gives out.
    private mutating func writeFiltered(
        _ filter: BitstreamFilter,
        scratch: borrowing Packet,
        outputIndex: Int32,
        output: borrowing OutputContainer
    ) throws(FFmpegError) {
        while try filter.receive(into: scratch.pointer) {
            scratch.pointer.pointee.stream_index = outputIndex
            av_packet_rescale_ts(
                scratch.pointer,
                filter.outputTimeBase,
                output.stream(at: outputIndex).pointee.time_base
            )
            self.copiedPackets[outputIndex, default: 0] += 1
            try output.write(scratch)
        }
    }

    /// Whether a packet to copy lies within the trim (shifted so that it starts at 0): shown before the start, it
    /// would show what the rule cut; decoded from the end on, likewise. The end is judged on the decoding time, as
    /// the `ffmpeg` CLI does, so that reordered frames shown before the end keep the frames they refer to.
    private static func isWithin(
        _ trim: TrimWindow,
        _ packet: UnsafeMutablePointer<AVPacket>,
        timeBase: AVRational
    ) -> Bool {
        let none = chute_nopts_value()
        let (pts, dts) = (packet.pointee.pts, packet.pointee.dts)
        if pts != none && pts < 0 { return false }
        let decoded = dts != none ? dts : pts
        guard decoded != none, let length = trim.length else { return true }
        return Double(decoded) * av_q2d(timeBase) < length - 0.000_001
    }

    /// Widens the extent of the packet's stream when it is audio or video, and returns where the packet ends, in
    /// seconds.
    private mutating func measure(
        _ packet: UnsafeMutablePointer<AVPacket>,
        timeBase: AVRational,
        stream: UnsafeMutablePointer<AVStream>
    ) -> Double? {
        let type = stream.pointee.codecpar.pointee.codec_type
        guard type == AVMEDIA_TYPE_VIDEO || type == AVMEDIA_TYPE_AUDIO,
            stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC == 0
        else {
            return nil
        }
        let timestamp = packet.pointee.pts != chute_nopts_value() ? packet.pointee.pts : packet.pointee.dts
        guard timestamp != chute_nopts_value() else { return nil }
        let start = Double(timestamp) * av_q2d(timeBase)
        let end = Double(timestamp + max(0, packet.pointee.duration)) * av_q2d(timeBase)
        self.extents[Int(stream.pointee.index), default: TimeExtent()].include(start: start, end: end)
        return end
    }
}
