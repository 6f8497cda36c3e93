import CFFmpeg
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

    /// The encoding for `codec`, or PCM for `nil` (WAV). FLAC and PCM keep 16 bits for sources of up to 16 bits
    /// (and for lossy sources, which have no bit depth), else 24.
    init(codec: AudioCodec?, sourceBits: Int) {
        let deep = sourceBits > 16
        switch codec {
        case nil:
            self.name = deep ? "pcm_s24le" : "pcm_s16le"
            self.codecID = deep ? AV_CODEC_ID_PCM_S24LE : AV_CODEC_ID_PCM_S16LE
            self.encoderName = self.name
            self.isLossless = true
            self.sampleFormat = deep ? AV_SAMPLE_FMT_S32 : AV_SAMPLE_FMT_S16
            self.bitsPerRawSample = nil
        case .flac?:
            self.name = "flac"
            self.codecID = AV_CODEC_ID_FLAC
            self.encoderName = "flac"
            self.isLossless = true
            self.sampleFormat = deep ? AV_SAMPLE_FMT_S32 : AV_SAMPLE_FMT_S16
            self.bitsPerRawSample = deep ? 24 : nil
        case let codec?:
            self.name = codec.rawValue
            self.codecID = codec.codecID
            self.encoderName = codec.encoderName
            self.isLossless = false
            self.sampleFormat = nil
            self.bitsPerRawSample = nil
        }
    }

    /// Whether a source stream in `codec` can be copied: the same codec, or for PCM targets any 16- or 24-bit
    /// little-endian PCM.
    func copies(_ codec: AVCodecID) -> Bool {
        if self.codecID == AV_CODEC_ID_PCM_S16LE || self.codecID == AV_CODEC_ID_PCM_S24LE {
            return codec == AV_CODEC_ID_PCM_S16LE || codec == AV_CODEC_ID_PCM_S24LE
        }
        return codec == self.codecID
    }
}
