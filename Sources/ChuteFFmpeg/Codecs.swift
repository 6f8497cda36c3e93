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
        }
    }

    /// The encoders that write it, the preferred first (SVT-AV1 is many times faster than libaom).
    var encoderNames: [String] {
        switch self {
        case .h264: return ["libx264"]
        case .hevc: return ["libx265"]
        case .vp9: return ["libvpx-vp9"]
        case .av1: return ["libsvtav1", "libaom-av1"]
        }
    }

    /// The constant-quality level when the rule sets neither `crf` nor `videoBitrate`.
    var defaultCRF: Int {
        switch self {
        case .h264: return 23
        case .hevc: return 28
        case .vp9, .av1: return 32
        }
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
        }
    }

    /// The sample rates of the encoders that take only some (LAME, libopus, FFmpeg's AAC); `nil` for those that take
    /// any rate from 8000 to 192000 Hz.
    var sampleRates: [Int]? {
        switch self {
        case .mp3: return [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
        case .opus: return [8000, 12000, 16000, 24000, 48000]
        case .aac: return [7350, 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000]
        case .vorbis, .flac: return nil
        }
    }

    /// The encoder that writes it.
    var encoderName: String {
        switch self {
        case .aac: return "aac"
        case .mp3: return "libmp3lame"
        case .opus: return "libopus"
        case .vorbis: return "libvorbis"
        case .flac: return "flac"
        }
    }
}
