import CFFmpeg
import ChuteCatalog
import ChuteCore

/// Reads a freshly written output back, through the descriptor it was written with, and checks that it decodes and
/// lasts as long as it should.
///
/// Outputs of up to ``wholeFileLimit`` are read entirely. Longer ones are read for their first and last
/// ``sampleSeconds`` (seeking back from the end their header gives), which catches a broken header, index or end at a
/// small, fixed cost whatever the length. Encoded streams are decoded in what is read. A copied stream holds the
/// input's packets unchanged, which the input's decoder already accepted when its streams were probed, so only its
/// first frame in each part read is decoded: a remux is checked without decoding seconds of video. The output's span
/// is measured from its packets, from the first read to the last. Each audio and video stream must yield frames in
/// each part, with errors in at most half of the packets decoded; and the output must last as long as the input's
/// kept streams, within ``TimeExtent/agree(_:_:)``.
enum OutputVerifier {
    /// Outputs up to this long, in seconds, are decoded entirely.
    static let wholeFileLimit = 10.0
    /// How much of the start and of the end of a longer output is decoded, in seconds.
    static let sampleSeconds = 2.0
    /// The part of the job that verification is, for progress.
    static let progressShare = 0.95...1.0
    /// The demuxers whose header declares every stream with its codec's parameters (MP4's sample descriptions,
    /// Matroska's tracks). An output in one is read back without `avformat_find_stream_info`, which would decode up
    /// to 7 H.264 frames to guess the decoder's delay, which the check does not use: 5 ms of a 66 MB remux's 25 ms
    /// read-back.
    static let declaringDemuxers: Set<String> = ["mov", "matroska"]

    /// What the check found.
    struct Result {
        /// The output's span in seconds, measured from its packets.
        var duration: Double
        /// Whether every packet was read, rather than the start and the end.
        var readWhole: Bool
        /// Whether some streams were copied, and so decoded only for their first frames.
        var hasCopies: Bool

        /// The sidecar's words for it.
        var description: String {
            let part = self.readWhole ? "entirely" : "the first and last \(Int(OutputVerifier.sampleSeconds)) s"
            guard self.hasCopies else {
                return self.readWhole ? "read back and decoded entirely" : "read back; decoded \(part)"
            }
            return "read back \(part); encoded streams decoded there, copied streams their first frame there"
        }
    }

    /// One output stream being decoded.
    ///
    /// A class because the verifier keeps one per stream in an array, which cannot hold non-copyable values.
    private final class StreamCheck {
        let decoder: Decoder
        let frame: Frame
        var tally: DecodeTally
        /// Whether the stream's packets were copied from the input.
        let isCopy: Bool
        /// Whether a part's first keyframe is decoded alone, the decoder drained right after it (copied video).
        private var drainsKeyframe: Bool

        init(decoder: consuming Decoder, tally: DecodeTally, isCopy: Bool, drainsKeyframe: Bool) throws(FFmpegError) {
            self.decoder = decoder
            self.frame = try Frame()
            self.tally = tally
            self.isCopy = isCopy
            self.drainsKeyframe = drainsKeyframe
        }

        /// Decodes a packet read back, unless the stream was copied and its part already gave a frame: a copied
        /// stream's part is decoded from its first keyframe until a frame comes out.
        ///
        /// A copied video's keyframe is decoded alone and the decoder drained: one that reorders pictures (H.264
        /// with B-frames) would otherwise hold it until two more frames were decoded, which are not checked (for
        /// a 1080p H.264 remux, 4 of the read-back's 6 decoded frames, measured). Should the keyframe alone give no
        /// picture (a hidden keyframe), the part is decoded on from its next keyframe until one comes out, as for
        /// other copied streams.
        func take(_ packet: borrowing Packet) throws(FFmpegError) {
            guard self.isCopy else {
                try self.decoder.decode(packet, into: self.frame, tally: &self.tally) { _ in }
                return
            }
            let isKey = packet.pointer.pointee.flags & AV_PKT_FLAG_KEY != 0
            guard self.tally.frames == 0, self.tally.packets > 0 || isKey else { return }
            try self.decoder.decode(packet, into: self.frame, tally: &self.tally) { _ in }
            guard self.drainsKeyframe, self.tally.frames == 0 else { return }
            try self.decoder.finish(into: self.frame, tally: &self.tally) { _ in }
            self.decoder.flush()
            if self.tally.frames == 0 {
                self.drainsKeyframe = false
                self.tally = DecodeTally(streamIndex: self.tally.streamIndex, codecName: self.tally.codecName)
            }
        }

        /// The frames decoded in all parts so far.
        private(set) var frames = 0

        /// Drains the decoder, judges the part just decoded (when the stream had packets in it), and starts a fresh
        /// count for the next.
        func finishPart() throws(FFmpegError) {
            try self.decoder.finish(into: self.frame, tally: &self.tally) { _ in }
            if self.tally.packets > 0 {
                _ = try self.tally.verdict()
            }
            self.frames += self.tally.frames
            self.tally = DecodeTally(streamIndex: self.tally.streamIndex, codecName: self.tally.codecName)
            self.decoder.flush()
        }
    }

    /// Checks `file`.
    ///
    /// - Parameters:
    ///   - file: the output, completely written.
    ///   - demuxer: the demuxer of the output's format (``TargetProfile/demuxer``).
    ///   - expectedDuration: how long the input's kept streams last, in seconds, when known.
    ///   - copiedStreams: the indexes of the output streams whose packets were copied from the input.
    ///   - meter: paces progress reports.
    ///   - progress: the job's progress callback.
    /// - Throws: ``FFmpegError`` with code `verify`.
    static func verify(
        _ file: MediaFile,
        demuxer: String,
        expectedDuration: Double?,
        copiedStreams: Set<Int32>,
        meter: inout ProgressMeter,
        progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> Result {
        do {
            return try self.check(
                file,
                demuxer: demuxer,
                expectedDuration: expectedDuration,
                copiedStreams: copiedStreams,
                meter: &meter,
                progress: progress
            )
        } catch {
            throw FFmpegError(.verify, error.function, status: error.status, detail: error.detail)
        }
    }

    private static func check(
        _ file: MediaFile,
        demuxer: String,
        expectedDuration: Double?,
        copiedStreams: Set<Int32>,
        meter: inout ProgressMeter,
        progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> Result {
        let container = try InputContainer(
            file: file,
            demuxer: demuxer,
            findsStreams: !Self.declaringDemuxers.contains(demuxer)
        )
        var checks: [Int: StreamCheck] = [:]
        for index in 0..<container.streamCount {
            let stream = container.stream(at: index)
            let source = SourceStream(stream)
            guard source.kind == .video || source.kind == .audio else { continue }
            let isCopy = copiedStreams.contains(Int32(index))
            checks[index] = try StreamCheck(
                // A copied stream's check decodes its first frame in each part: one thread gives it out from its
                // packet, where frame threads would take in and decode a packet per thread first.
                decoder: try Decoder(stream: stream, threads: isCopy ? 1 : nil),
                tally: DecodeTally(streamIndex: index, codecName: source.codecName),
                isCopy: isCopy,
                drainsKeyframe: isCopy && source.kind == .video
            )
        }
        guard !checks.isEmpty else {
            throw FFmpegError(.verify, "avformat_find_stream_info", detail: "the output has no audio or video stream")
        }

        // A short output, or one whose header gives no duration, is read entirely. A longer one is read from its
        // start until every stream is past the first seconds, then from the keyframe before its last seconds (by the
        // duration its header gives) to the end; its span runs from the first packet to the last, so a missing end
        // still shows.
        let declared = container.declaredDuration
        let whole = (expectedDuration ?? 0) <= Self.wholeFileLimit || declared == nil
        let packet = try Packet()
        var extent = TimeExtent()
        var pastStart: Set<Int> = []
        while try container.read(into: packet) {
            defer { packet.unref() }
            let index = Int(packet.pointer.pointee.stream_index)
            guard let check = checks[index], let span = Self.span(of: packet, in: container) else { continue }
            extent.include(start: span.start, end: span.end)
            if whole {
                if let expectedDuration, expectedDuration > 0 {
                    meter.report(span.end / expectedDuration, of: Self.progressShare, to: progress)
                }
            } else if span.start >= Self.sampleSeconds {
                pastStart.insert(index)
                if pastStart.count == checks.count { break }
                continue
            }
            try check.take(packet)
        }
        for check in checks.values {
            try check.finishPart()
        }
        if !whole, let declared {
            meter.report(0.5, of: Self.progressShare, to: progress)
            try container.seek(toSeconds: max(0, declared - Self.sampleSeconds))
            while try container.read(into: packet) {
                defer { packet.unref() }
                let index = Int(packet.pointer.pointee.stream_index)
                guard let check = checks[index] else { continue }
                if let span = Self.span(of: packet, in: container) {
                    extent.include(start: span.start, end: span.end)
                }
                try check.take(packet)
            }
            for check in checks.values {
                try check.finishPart()
            }
        }
        guard let duration = extent.length else {
            throw FFmpegError(.verify, "av_read_frame", detail: "the output has no timed packets")
        }

        for (index, check) in checks where check.frames == 0 {
            throw FFmpegError(.verify, "avcodec_receive_frame", detail: "output stream #\(index) has no frames")
        }
        if let expectedDuration, !TimeExtent.agree(duration, expectedDuration) {
            throw FFmpegError(
                .verify,
                "duration check",
                detail: "the output lasts \(Self.seconds(duration)) but the input's kept streams last "
                    + "\(Self.seconds(expectedDuration))"
            )
        }
        return Result(duration: duration, readWhole: whole, hasCopies: checks.values.contains { $0.isCopy })
    }

    /// Where a packet starts and ends, in seconds, or `nil` when it carries no time.
    private static func span(
        of packet: borrowing Packet,
        in container: borrowing InputContainer
    ) -> (start: Double, end: Double)? {
        let target = packet.pointer.pointee
        let timestamp = target.pts != chute_nopts_value() ? target.pts : target.dts
        guard timestamp != chute_nopts_value() else { return nil }
        let seconds = av_q2d(container.stream(at: Int(target.stream_index)).pointee.time_base)
        return (Double(timestamp) * seconds, Double(timestamp + max(0, target.duration)) * seconds)
    }

    /// A duration for messages: `12.345 s`.
    static func seconds(_ value: Double) -> String {
        "\((value * 1000).rounded() / 1000) s"
    }
}
