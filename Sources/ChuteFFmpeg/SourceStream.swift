import CFFmpeg
import ChuteCatalog

/// What the planner needs to know about one input stream, read once from its `AVStream`.
struct SourceStream {
    /// The stream's role.
    enum Kind {
        case video, audio, subtitle
        /// A still picture attached as cover art (`AV_DISPOSITION_ATTACHED_PIC`).
        case coverArt
        /// Data, attachments and streams of unknown type, which are never carried over.
        case other
    }

    /// The stream's index in the input.
    let index: Int
    let kind: Kind
    let codecID: AVCodecID
    /// FFmpeg's name for the codec, such as `h264`.
    let codecName: String
    /// Video: the coded picture size, and whether probing found the pixel format (a stream FFmpeg could not make
    /// sense of has none).
    let width: Int
    let height: Int
    let hasPixelFormat: Bool
    /// Video: the decoded pixel format (`AV_PIX_FMT_NONE` when probing found none).
    let pixelFormat: AVPixelFormat
    /// Video: the transfer characteristic its header declares (HLG and PQ are HDR).
    let colourTransfer: AVColorTransferCharacteristic
    /// Video: where its chroma samples sit.
    let chromaLocation: AVChromaLocation
    /// Video: how a player turns the picture, when the stream says.
    let displayMatrix: DisplayMatrix?
    /// Video: frames per second (the average, else the container's base rate), when known.
    let frameRate: Double?
    /// Video: the frame count the container declares, when it does.
    let frameCount: Int?
    /// Video: how many frames the codec reorders (B-frames), 0 when it does not.
    let reorderDelay: Int
    /// Bits per second, 0 when the container does not say.
    let bitRate: Int
    /// Audio: samples per second and channel count.
    let sampleRate: Int
    let channels: Int
    /// Audio: bits per sample of the source, 0 when it has no such notion (lossy codecs).
    let bitsPerSample: Int
    /// Audio: whether the codec is lossless (FLAC, PCM, ALAC, WavPack).
    let isLossless: Bool
    /// Subtitles: whether they are text (SubRip, ASS, WebVTT, 3GPP timed text) rather than pictures.
    let isTextSubtitle: Bool

    /// Reads `stream`'s parameters.
    init(_ stream: UnsafePointer<AVStream>) {
        let parameters = stream.pointee.codecpar.pointee
        self.index = Int(stream.pointee.index)
        self.codecID = parameters.codec_id
        self.codecName = String(cString: avcodec_get_name(parameters.codec_id))
        switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO:
            self.kind = stream.pointee.disposition & AV_DISPOSITION_ATTACHED_PIC != 0 ? .coverArt : .video
        case AVMEDIA_TYPE_AUDIO: self.kind = .audio
        case AVMEDIA_TYPE_SUBTITLE: self.kind = .subtitle
        default: self.kind = .other
        }
        self.width = Int(parameters.width)
        self.height = Int(parameters.height)
        self.hasPixelFormat = parameters.format >= 0
        self.pixelFormat = AVPixelFormat(rawValue: parameters.format)
        self.colourTransfer = parameters.color_trc
        self.chromaLocation = parameters.chroma_location
        self.displayMatrix = DisplayMatrix(of: stream)
        let average = stream.pointee.avg_frame_rate
        let base = stream.pointee.r_frame_rate
        let rate = average.num > 0 && average.den > 0 ? average : base
        self.frameRate = rate.num > 0 && rate.den > 0 ? av_q2d(rate) : nil
        self.frameCount = stream.pointee.nb_frames > 0 ? Int(stream.pointee.nb_frames) : nil
        self.reorderDelay = Int(parameters.video_delay)
        self.bitRate = Int(parameters.bit_rate)
        self.sampleRate = Int(parameters.sample_rate)
        self.channels = Int(parameters.ch_layout.nb_channels)
        let rawBits = parameters.bits_per_raw_sample
        self.bitsPerSample = Int(rawBits > 0 ? rawBits : av_get_bits_per_sample(parameters.codec_id))
        let properties = avcodec_descriptor_get(parameters.codec_id)?.pointee.props ?? 0
        self.isLossless = properties & AV_CODEC_PROP_LOSSLESS != 0
        self.isTextSubtitle = properties & AV_CODEC_PROP_TEXT_SUB != 0
    }

    /// The size a player shows, after the display matrix's rotation.
    var displaySize: (width: Int, height: Int) {
        self.displayMatrix?.swapsDimensions == true ? (self.height, self.width) : (self.width, self.height)
    }

    /// A short description for reports: `h264 1920x1080 29.97 fps`, `aac 48000 Hz 2 ch`, `subrip`.
    var summary: String {
        switch self.kind {
        case .video:
            let rate = self.frameRate.map { " \(($0 * 100).rounded() / 100) fps" } ?? ""
            return "\(self.codecName) \(self.width)x\(self.height)\(rate)"
        case .audio:
            return "\(self.codecName) \(self.sampleRate) Hz \(self.channels) ch"
        case .subtitle, .coverArt, .other:
            return self.codecName
        }
    }
}
