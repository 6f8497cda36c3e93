import CFFmpeg
import ChuteCatalog
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

extension PCMCodec {
    /// FFmpeg's codec.
    var codecID: AVCodecID {
        switch self {
        case .signed16LittleEndian: AV_CODEC_ID_PCM_S16LE
        case .signed24LittleEndian: AV_CODEC_ID_PCM_S24LE
        case .signed16BigEndian: AV_CODEC_ID_PCM_S16BE
        case .signed24BigEndian: AV_CODEC_ID_PCM_S24BE
        }
    }
}

extension FrameRate {
    /// The rate as FFmpeg's fraction.
    var rational: AVRational { AVRational(num: self.numerator, den: self.denominator) }

    /// The rate in frames per second.
    var value: Double { Double(self.numerator) / Double(self.denominator) }
}
