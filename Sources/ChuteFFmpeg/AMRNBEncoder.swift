import CFFmpeg
import COpenCoreAMRNB

/// Encodes AMR-NB with opencore-amrnb, which Chute links itself: Debian's FFmpeg decodes AMR but has no encoder for
/// it.
///
/// Takes frames of 160 mono 16-bit samples at 8 kHz (20 ms; the filter graph cuts them, ``formatFilter``; a shorter
/// last frame is padded with silence) and gives one packet per frame in the storage format of RFC 4867 §5 (a
/// table-of-contents byte, then the speech bits), which is what an `.amr` file holds after the `#!AMR\n` magic that
/// FFmpeg's `amr` muxer writes. The same calls as ``Encoder``'s: ``send(_:)``, ``sendEndOfStream()``,
/// ``receive(into:)``.
///
/// The corresponding C functions are `Encoder_Interface_init`, `Encoder_Interface_Encode` and
/// `Encoder_Interface_exit`.
struct AMRNBEncoder: ~Copyable {
    /// The one sample rate of AMR-NB.
    static let sampleRate: Int32 = 8000
    /// The samples of one frame (20 ms).
    static let frameSamples: Int32 = 160
    /// The end of the filter graph: mono 16-bit samples at 8 kHz.
    static let formatFilter = "aformat=sample_fmts=s16:sample_rates=8000:channel_layouts=mono"
    /// The codec's eight modes by bitrate. The corresponding C constants are `MR475` to `MR122`.
    static let modes: [(bitRate: Int, mode: Mode)] = [
        (4750, MR475), (5150, MR515), (5900, MR59), (6700, MR67), (7400, MR74), (7950, MR795), (10200, MR102),
        (12200, MR122),
    ]

    /// The packets encoded and not yet taken, in order.
    ///
    /// A class so that ``send(_:)`` can add to it while the encoder is only borrowed, like ``Encoder``'s context.
    private final class Pending {
        var packets: [(bytes: [UInt8], timestamp: Int64)] = []
        var nextSample: Int64 = 0
        var ended = false
    }

    private let state: UnsafeMutableRawPointer
    private let mode: Mode
    /// The bitrate of the mode used, in bits per second.
    let bitRate: Int
    private let pending = Pending()

    /// Starts an encoder in the highest mode at or below `bitRate` (12.2 kb/s without one; 4.75 kb/s below all).
    ///
    /// - Throws: ``FFmpegError`` with code `encode` when opencore-amrnb cannot allocate its state.
    init(bitRate: Int?) throws(FFmpegError) {
        let chosen = Self.modes.last { $0.bitRate <= bitRate ?? Int.max } ?? Self.modes[0]
        // Discontinuous transmission off: every frame is coded, as players of .amr files expect.
        guard let state = Encoder_Interface_init(0) else {
            throw FFmpegError(
                .encode,
                "Encoder_Interface_init",
                status: chute_averror(ENOMEM),
                detail: "opencore-amrnb could not allocate an encoder"
            )
        }
        self.mode = chosen.mode
        self.bitRate = chosen.bitRate
        self.state = state
    }

    deinit {
        Encoder_Interface_exit(self.state)
    }

    /// The time base of the packets: one sample.
    var timeBase: AVRational {
        AVRational(num: 1, den: Self.sampleRate)
    }

    /// Describes the stream to the muxer: AMR-NB, mono, 8 kHz, 160 samples a frame.
    func describe(_ parameters: UnsafeMutablePointer<AVCodecParameters>) {
        parameters.pointee.codec_type = AVMEDIA_TYPE_AUDIO
        parameters.pointee.codec_id = AV_CODEC_ID_AMR_NB
        parameters.pointee.format = AV_SAMPLE_FMT_S16.rawValue
        parameters.pointee.sample_rate = Self.sampleRate
        av_channel_layout_uninit(&parameters.pointee.ch_layout)
        av_channel_layout_default(&parameters.pointee.ch_layout, 1)
        parameters.pointee.frame_size = Self.frameSamples
        parameters.pointee.bit_rate = Int64(self.bitRate)
    }

    /// Encodes one frame of at most 160 mono 16-bit samples. The corresponding C function is
    /// `Encoder_Interface_Encode`.
    ///
    /// - Throws: ``FFmpegError`` with code `encode` when the frame is not what the graph was told to make, or the
    ///   library codes nothing.
    func send(_ frame: borrowing Frame) throws(FFmpegError) {
        let pointer = frame.pointer
        let count = Int(pointer.pointee.nb_samples)
        guard count <= Int(Self.frameSamples), pointer.pointee.format == AV_SAMPLE_FMT_S16.rawValue,
            pointer.pointee.ch_layout.nb_channels == 1, let data = pointer.pointee.data.0
        else {
            throw FFmpegError(
                .encode,
                "Encoder_Interface_Encode",
                status: chute_averror(EINVAL),
                detail: "AMR-NB takes frames of at most 160 mono 16-bit samples, got \(count)"
            )
        }
        var speech = [Int16](repeating: 0, count: Int(Self.frameSamples))
        data.withMemoryRebound(to: Int16.self, capacity: count) { samples in
            for index in 0..<count {
                speech[index] = samples[index]
            }
        }
        // 32 bytes is the largest frame (12.2 kb/s: a byte of header, 244 bits of speech); the library's own
        // buffers are sized so.
        var bytes = [UInt8](repeating: 0, count: 32)
        let size = Encoder_Interface_Encode(self.state, self.mode, speech, &bytes, 0)
        guard size > 0, size <= bytes.count else {
            throw FFmpegError(
                .encode,
                "Encoder_Interface_Encode",
                status: chute_averror(EINVAL),
                detail: "opencore-amrnb returned \(size) bytes for a frame"
            )
        }
        let timestamp = pointer.pointee.pts != chute_nopts_value() ? pointer.pointee.pts : self.pending.nextSample
        self.pending.packets.append((Array(bytes[..<Int(size)]), timestamp))
        self.pending.nextSample = timestamp + Int64(Self.frameSamples)
    }

    /// Tells the encoder that no frame follows. AMR-NB holds no frames back, so nothing more comes out.
    func sendEndOfStream() {
        self.pending.ended = true
    }

    /// Takes the next encoded frame into `packet`, timed in samples (``timeBase``).
    ///
    /// - Throws: ``FFmpegError`` with code `encode` when memory runs out.
    func receive(into packet: borrowing Packet) throws(FFmpegError) -> CodecOutput {
        guard !self.pending.packets.isEmpty else {
            return self.pending.ended ? .finished : .needsInput
        }
        let next = self.pending.packets.removeFirst()
        let target = packet.pointer
        try FFmpegError.check(av_new_packet(target, Int32(next.bytes.count)), .encode, "av_new_packet")
        target.pointee.data.update(from: next.bytes, count: next.bytes.count)
        target.pointee.pts = next.timestamp
        target.pointee.dts = next.timestamp
        target.pointee.duration = Int64(Self.frameSamples)
        target.pointee.flags |= AV_PKT_FLAG_KEY
        return .ready
    }
}
