import CFFmpeg
import ChuteCore

extension VideoCodec {
    /// FFmpeg's codec identifier.
    var codecID: AVCodecID {
        switch self {
        case .h264: return AV_CODEC_ID_H264
        case .hevc: return AV_CODEC_ID_HEVC
        case .vp9: return AV_CODEC_ID_VP9
        case .av1: return AV_CODEC_ID_AV1
        case .mpeg4: return AV_CODEC_ID_MPEG4
        case .mpeg1video: return AV_CODEC_ID_MPEG1VIDEO
        case .mpeg2video: return AV_CODEC_ID_MPEG2VIDEO
        case .wmv2: return AV_CODEC_ID_WMV2
        case .flv1: return AV_CODEC_ID_FLV1
        case .rv10: return AV_CODEC_ID_RV10
        case .theora: return AV_CODEC_ID_THEORA
        case .amv: return AV_CODEC_ID_AMV
        }
    }

    /// The encoders that write it, the preferred first (SVT-AV1 is many times faster than libaom).
    var encoderNames: [String] {
        switch self {
        case .h264: return ["libx264"]
        case .hevc: return ["libx265"]
        case .vp9: return ["libvpx-vp9"]
        case .av1: return ["libsvtav1", "libaom-av1"]
        case .flv1: return ["flv"]
        case .theora: return ["libtheora"]
        case .mpeg4, .mpeg1video, .mpeg2video, .wmv2, .rv10, .amv: return [self.rawValue]
        }
    }

    /// The constant-quality level when the rule sets neither `crf` nor `videoBitrate`, or `nil` for the older codecs,
    /// which have no constant-quality mode (``quantizer``).
    var defaultCRF: Int? {
        switch self {
        case .h264: return 23
        case .hevc: return 28
        case .vp9, .av1: return 32
        case .mpeg4, .mpeg1video, .mpeg2video, .wmv2, .flv1, .rv10, .theora, .amv: return nil
        }
    }

    /// The fixed quantizer of the codecs without a constant-quality mode when the rule sets no `videoBitrate`: 3 on
    /// the 2–31 scale of FFmpeg's MPEG-family encoders (lower is better; their default of 200 kb/s is blocky), 7 on
    /// Theora's 0–10 (higher is better).
    var quantizer: Int? {
        switch self {
        case .h264, .hevc, .vp9, .av1: return nil
        case .theora: return 7
        case .mpeg4, .mpeg1video, .mpeg2video, .wmv2, .flv1, .rv10, .amv: return 3
        }
    }

    /// The pixel format the encoder is given: 8-bit 4:2:0, in full range for AMV (its only format).
    var pixelFormat: AVPixelFormat {
        self == .amv ? AV_PIX_FMT_YUVJ420P : AV_PIX_FMT_YUV420P
    }
}

extension AudioCodec {
    /// FFmpeg's codec identifier.
    var codecID: AVCodecID {
        switch self {
        case .aac: return AV_CODEC_ID_AAC
        case .mp3: return AV_CODEC_ID_MP3
        case .opus: return AV_CODEC_ID_OPUS
        case .vorbis: return AV_CODEC_ID_VORBIS
        case .flac: return AV_CODEC_ID_FLAC
        case .mp2: return AV_CODEC_ID_MP2
        case .ac3: return AV_CODEC_ID_AC3
        case .wmav2: return AV_CODEC_ID_WMAV2
        case .amrNB: return AV_CODEC_ID_AMR_NB
        case .gsm: return AV_CODEC_ID_GSM
        case .dts: return AV_CODEC_ID_DTS
        case .wavpack: return AV_CODEC_ID_WAVPACK
        case .speex: return AV_CODEC_ID_SPEEX
        case .pcm: return AV_CODEC_ID_PCM_S16LE
        case .amvAudio: return AV_CODEC_ID_ADPCM_IMA_AMV
        }
    }

    /// The sample rates of the encoders that take only some (LAME, libopus, FFmpeg's AAC, …); `nil` for those that
    /// take any rate from 8000 to 192000 Hz.
    var sampleRates: [Int]? {
        switch self {
        case .mp3: return [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .opus: return [8000, 12000, 16000, 24000, 48000]
        case .aac: return [7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
        case .mp2: return [16000, 22050, 24000, 32000, 44100, 48000]
        case .ac3: return [32000, 44100, 48000]
        case .dts: return [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .speex: return [8000, 16000, 32000]
        case .amrNB, .gsm: return [8000]
        case .amvAudio: return [22050]
        case .vorbis, .flac, .wavpack, .pcm, .wmav2: return nil
        }
    }

    /// The most channels the encoder takes, or `nil` for the 8 of the `channels` option.
    var maxChannels: Int? {
        switch self {
        case .mp3, .mp2, .wmav2, .speex: return 2
        case .ac3, .dts: return 6
        case .amrNB, .gsm, .amvAudio: return 1
        case .aac, .opus, .vorbis, .flac, .wavpack, .pcm: return nil
        }
    }

    /// Whether the codec is lossless, which takes no bitrate.
    var isLossless: Bool {
        self == .flac || self == .wavpack || self == .pcm
    }

    /// The encoder that writes it. AMR-NB has none in Debian's FFmpeg: Chute encodes it with opencore-amrnb
    /// (``AMRNBEncoder``).
    var encoderName: String {
        switch self {
        case .aac: return "aac"
        case .mp3: return "libmp3lame"
        case .opus: return "libopus"
        case .vorbis: return "libvorbis"
        case .flac: return "flac"
        case .mp2: return "mp2"
        case .ac3: return "ac3"
        case .wmav2: return "wmav2"
        case .amrNB: return "opencore-amrnb"
        case .gsm: return "libgsm"
        case .dts: return "dca"
        case .wavpack: return "wavpack"
        case .speex: return "libspeex"
        case .pcm: return "pcm_s16le"
        case .amvAudio: return "adpcm_ima_amv"
        }
    }
}
