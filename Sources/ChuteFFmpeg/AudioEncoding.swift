import CFFmpeg
import ChuteCatalog
import ChuteCore

/// The audio codec Chute writes for a target, with the encoder and sample format it uses.
struct AudioEncoding {
    /// The codec's name for reports: `aac`, `pcm_s24le`.
    let name: String
    let codecID: AVCodecID
    let encoderName: String
    /// Whether the codec is lossless, which takes no bitrate.
    let isLossless: Bool
    /// The sample format Chute picks, or `nil` to let the filter graph choose among the encoder's formats the one
    /// nearest the source's (as the `ffmpeg` CLI does).
    let sampleFormat: AVSampleFormat?
    /// The significant bits per sample of FLAC's 32-bit format (24), or `nil`.
    let bitsPerRawSample: Int32?
    /// The codecs whose packets the target takes as they are: the codec itself, or for PCM the 16- and 24-bit PCM
    /// the container holds.
    private let copiable: [AVCodecID]

    /// The encoding for `codec`, or PCM for `nil` and `pcm` (in the byte order the container takes). FLAC and PCM
    /// keep 16 bits for sources of up to 16 bits (and for lossy sources, which have no bit depth), else 24 where the
    /// container holds it.
    ///
    /// - Parameters:
    ///   - codec: the target's codec.
    ///   - sourceBits: the source's bits per sample.
    ///   - pcmCodecs: the container's 16-bit PCM, then its 24-bit PCM if it holds one (``TargetProfile``).
    init(codec: AudioCodec?, sourceBits: Int, pcmCodecs declared: [PCMCodec]) {
        let pcmCodecs = declared.map(\.codecID)
        let deep = sourceBits > 16
        switch codec {
        case nil, .pcm?:
            let id = deep && pcmCodecs.count > 1 ? pcmCodecs[1] : pcmCodecs[0]
            self.name = String(cString: avcodec_get_name(id))
            self.codecID = id
            self.encoderName = self.name
            self.isLossless = true
            self.sampleFormat = id == pcmCodecs[0] ? AV_SAMPLE_FMT_S16 : AV_SAMPLE_FMT_S32
            self.bitsPerRawSample = nil
            self.copiable = pcmCodecs
        case .flac?:
            self.name = "flac"
            self.codecID = AV_CODEC_ID_FLAC
            self.encoderName = "flac"
            self.isLossless = true
            self.sampleFormat = deep ? AV_SAMPLE_FMT_S32 : AV_SAMPLE_FMT_S16
            self.bitsPerRawSample = deep ? 24 : nil
            self.copiable = [AV_CODEC_ID_FLAC]
        case let codec?:
            self.name = codec.rawValue
            self.codecID = codec.codecID
            self.encoderName = codec.encoderName
            self.isLossless = codec.isLossless
            self.sampleFormat = nil
            self.bitsPerRawSample = nil
            self.copiable = [codec.codecID]
        }
    }

    /// Whether a source stream in `codec` can be copied: the same codec, or for PCM targets any PCM of the
    /// container's byte order and depths.
    func copies(_ codec: AVCodecID) -> Bool {
        self.copiable.contains(codec)
    }
}
