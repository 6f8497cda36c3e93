import CFFmpeg

/// The encoder of one audio stream: one of FFmpeg's, or opencore-amrnb's for AMR-NB, which Debian's FFmpeg lacks.
enum AudioEncoder: ~Copyable {
    case ffmpeg(Encoder)
    case amrNB(AMRNBEncoder)

    /// The time base of the packets it gives out: one sample.
    var timeBase: AVRational {
        switch self {
        case .ffmpeg(let encoder): return encoder.context.pointee.time_base
        case .amrNB(let encoder): return encoder.timeBase
        }
    }

    /// The sample rate and channel count it encodes.
    var sampleRate: Int32 {
        switch self {
        case .ffmpeg(let encoder): return encoder.context.pointee.sample_rate
        case .amrNB: return AMRNBEncoder.sampleRate
        }
    }

    var channels: Int32 {
        switch self {
        case .ffmpeg(let encoder): return encoder.context.pointee.ch_layout.nb_channels
        case .amrNB: return 1
        }
    }

    /// Fills an output stream's codec parameters. The corresponding C function is `avcodec_parameters_from_context`.
    ///
    /// - Throws: ``FFmpegError`` with code `encode`.
    func describe(_ parameters: UnsafeMutablePointer<AVCodecParameters>) throws(FFmpegError) {
        switch self {
        case .ffmpeg(let encoder):
            try FFmpegError.check(
                avcodec_parameters_from_context(parameters, encoder.context),
                .encode,
                "avcodec_parameters_from_context"
            )
        case .amrNB(let encoder):
            encoder.describe(parameters)
        }
    }

    func send(_ frame: borrowing Frame) throws(FFmpegError) {
        switch self {
        case .ffmpeg(let encoder): try encoder.send(frame)
        case .amrNB(let encoder): try encoder.send(frame)
        }
    }

    func sendEndOfStream() throws(FFmpegError) {
        switch self {
        case .ffmpeg(let encoder): try encoder.sendEndOfStream()
        case .amrNB(let encoder): encoder.sendEndOfStream()
        }
    }

    func receive(into packet: borrowing Packet) throws(FFmpegError) -> CodecOutput {
        switch self {
        case .ffmpeg(let encoder): return try encoder.receive(into: packet)
        case .amrNB(let encoder): return try encoder.receive(into: packet)
        }
    }
}
