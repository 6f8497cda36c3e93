import ChuteCore

// What the video and audio codecs take, for the rules' checks and the encoders' settings alike; FFmpeg's identifiers
// for them are the media engine's (ChuteFFmpeg).

extension VideoCodec {
    /// The constant-quality level when the rule sets neither `crf` nor `videoBitrate`, or `nil` for the older codecs,
    /// which have no constant-quality mode (``quantizer``).
    package var defaultCRF: Int? {
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
    package var quantizer: Int? {
        switch self {
        case .h264, .hevc, .vp9, .av1: return nil
        case .theora: return 7
        case .mpeg4, .mpeg1video, .mpeg2video, .wmv2, .flv1, .rv10, .amv: return 3
        }
    }
}

extension AudioCodec {
    /// The sample rates of the encoders that take only some (LAME, libopus, FFmpeg's AAC, …); `nil` for those that
    /// take any rate from 8000 to 192000 Hz.
    package var sampleRates: [Int]? {
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
    package var maxChannels: Int? {
        switch self {
        case .mp3, .mp2, .wmav2, .speex: return 2
        case .ac3, .dts: return 6
        case .amrNB, .gsm, .amvAudio: return 1
        case .aac, .opus, .vorbis, .flac, .wavpack, .pcm: return nil
        }
    }

    /// Whether the codec is lossless, which takes no bitrate.
    package var isLossless: Bool {
        self == .flac || self == .wavpack || self == .pcm
    }
}
