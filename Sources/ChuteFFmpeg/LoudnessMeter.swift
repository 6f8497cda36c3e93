import CFFmpeg

/// Measures the integrated loudness of an audio stream (EBU R128) with FFmpeg's `ebur128` filter.
///
/// The stream is decoded from the start of the file in a container of its own, so the conversion's reading is not
/// disturbed; `ebur128` (with `metadata=1`) tags each frame it passes with the loudness so far, and the last frame's
/// `lavfi.r128.I` is the whole stream's.
enum LoudnessMeter {
    /// What `ebur128` reports when nothing is above its absolute gate: silence.
    static let silence = -70.0

    /// The integrated loudness of one stream in LUFS, or `nil` when it has no frame.
    ///
    /// - Parameters:
    ///   - file: the input.
    ///   - index: the audio stream's index.
    /// - Throws: ``FFmpegError``: `decode` when the stream cannot be read, `filter`.
    static func integratedLoudness(of file: MediaFile, stream index: Int) throws(FFmpegError) -> Double? {
        let container = try InputContainer(file: file)
        let stream = container.stream(at: index)
        let decoder = try Decoder(stream: stream)
        let context = decoder.context.pointee
        let sampleTimeBase = AVRational(num: 1, den: max(1, context.sample_rate))
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
            chain: "ebur128=metadata=1"
        )
        let packet = try Packet()
        let decoded = try Frame()
        let measured = try Frame()
        var tally = DecodeTally(streamIndex: index, codecName: String(cString: avcodec_get_name(context.codec_id)))
        var nextSample: Int64 = 0
        var loudness: Double?

        func drain() throws(FFmpegError) {
            while case .ready = try graph.pull(into: measured) {
                defer { measured.unref() }
                if let entry = av_dict_get(measured.pointer.pointee.metadata, "lavfi.r128.I", nil, 0),
                    let value = entry.pointee.value
                {
                    loudness = Double(String(cString: value))
                }
            }
        }
        func measure(_ frame: borrowing Frame) throws(FFmpegError) {
            // The filter counts samples, not times: frames are given consecutive times, in samples.
            frame.pointer.pointee.pts = nextSample
            nextSample += Int64(frame.pointer.pointee.nb_samples)
            try graph.push(frame)
            try drain()
        }

        while try container.read(into: packet) {
            defer { packet.unref() }
            guard Int(packet.pointer.pointee.stream_index) == index else { continue }
            try decoder.decode(packet, into: decoded, tally: &tally) { (frame) throws(FFmpegError) in
                try measure(frame)
            }
        }
        try decoder.finish(into: decoded, tally: &tally) { (frame) throws(FFmpegError) in
            try measure(frame)
        }
        try graph.pushEndOfStream()
        try drain()
        _ = try tally.verdict()
        return loudness
    }
}
