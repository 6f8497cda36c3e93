import CFFmpeg
import ChuteCore

/// What a target format holds and what Chute writes into it by default.
struct TargetProfile {
    /// How a target carries subtitles.
    enum Subtitles {
        /// Not at all (audio targets).
        case none
        /// Text subtitles, re-encoded with this encoder unless they already use its codec.
        case text(encoder: String)
        /// Whatever the muxer takes is copied; other text subtitles are re-encoded with this encoder.
        case copyOrText(encoder: String)
    }

    /// The format.
    let format: TargetFormat
    /// The video codecs the container holds, the default first; empty for audio targets.
    let videoCodecs: [VideoCodec]
    /// The audio codecs the container holds, the default first; for audio targets, the one codec of the format
    /// (`wav`, which holds PCM, has none).
    let audioCodecs: [AudioCodec]
    /// Whether the muxer stores a display matrix (MP4 and MOV do; FFmpeg 5.1's Matroska muxer drops it).
    let keepsDisplayMatrix: Bool
    /// How subtitles are carried.
    let subtitles: Subtitles
    /// Whether the muxer stores cover pictures (MP3's ID3, M4A's `covr`, FLAC's PICTURE).
    let holdsCoverArt: Bool
    /// The bitrate of lossy audio when the rule sets none.
    let defaultAudioBitrate: Int

    /// Whether the target is a video container.
    var isVideo: Bool { !self.videoCodecs.isEmpty }

    /// The profile of a video or audio target.
    init(_ format: TargetFormat) {
        self.format = format
        self.keepsDisplayMatrix = format.name == "mp4" || format.name == "mov"
        self.holdsCoverArt = ["mp3", "m4a", "flac"].contains(format.name)
        switch format.name {
        case "mp4":
            self.videoCodecs = [.h264, .hevc, .vp9, .av1]
            self.audioCodecs = [.aac, .mp3]
            self.subtitles = .text(encoder: "mov_text")
        case "mov":
            self.videoCodecs = [.h264, .hevc]
            self.audioCodecs = [.aac, .mp3]
            self.subtitles = .text(encoder: "mov_text")
        case "mkv":
            self.videoCodecs = [.h264, .hevc, .vp9, .av1]
            self.audioCodecs = [.aac, .opus, .vorbis, .mp3, .flac]
            self.subtitles = .copyOrText(encoder: "srt")
        case "webm":
            self.videoCodecs = [.vp9, .av1]
            self.audioCodecs = [.opus, .vorbis]
            self.subtitles = .text(encoder: "webvtt")
        default:
            self.videoCodecs = []
            let codec: [String: AudioCodec] = [
                "mp3": .mp3, "m4a": .aac, "opus": .opus, "ogg": .vorbis, "flac": .flac,
            ]
            self.audioCodecs = codec[format.name].map { [$0] } ?? []
            self.subtitles = .none
        }
        self.defaultAudioBitrate = self.videoCodecs.isEmpty && format.name != "opus" ? 192_000 : 128_000
    }
}
