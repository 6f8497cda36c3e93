/// The parameters of one conversion, shared by rules, `chute convert` and the worker protocol.
///
/// Every field is optional: `nil` means the engine's default. Fields that an engine does not use are refused when a
/// rule is read, so a value is never silently ignored.
package struct ConversionOptions: Sendable, Equatable, Codable {
    /// A video codec a rule can ask for with `videoCodec`.
    package enum VideoCodec: String, Sendable, Hashable, Codable, CaseIterable {
        case h264, hevc, vp9, av1
    }

    /// An audio codec a rule can ask for with `audioCodec`.
    package enum AudioCodec: String, Sendable, Hashable, Codable, CaseIterable {
        case aac, mp3, opus, vorbis, flac
    }

    /// An encoder speed preset of x264 and x265, fastest first.
    package enum Preset: String, Sendable, Hashable, Codable, CaseIterable {
        case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
    }

    /// `quality` (number, 0 < q ≤ 1, or a percentage 1 < q ≤ 100): lossy encoder quality; images default to 0.85.
    package var quality: Double?
    /// `width` (int, pixels): the output is at most this wide; the aspect ratio is kept and nothing is upscaled
    /// (unless `upscale` is set, for video).
    package var width: Int?
    /// `height` (int, pixels): the output is at most this high; the aspect ratio is kept and nothing is upscaled
    /// (unless `upscale` is set, for video).
    package var height: Int?
    /// `strip` (bool, default false): remove EXIF, GPS, XMP and comments from the output (ICC profiles are kept).
    package var strip: Bool?
    /// `upscale` (bool, default false): let a video smaller than `width`/`height` grow to fill the box.
    package var upscale: Bool?
    /// `videoCodec` (default: h264 for mp4, mov and mkv; vp9 for webm): the video codec of a video target.
    package var videoCodec: VideoCodec?
    /// `crf` (int; default 23 for h264, 28 for hevc, 32 for vp9 and av1): constant-quality level, lower is better.
    package var crf: Int?
    /// `videoBitrate` (bits per second, none by default): an average video bitrate instead of `crf`.
    package var videoBitrate: Int?
    /// `preset` (default `medium`): the x264/x265 speed preset.
    package var preset: Preset?
    /// `maxFrameRate` (frames per second, none by default): frames are dropped to stay at or below this rate.
    package var maxFrameRate: Double?
    /// `audioCodec` (default: aac for mp4, mov and mkv; opus for webm): the audio codec of a video target.
    package var audioCodec: AudioCodec?
    /// `audioBitrate` (bits per second; default 128k in videos, 192k for mp3, m4a and ogg, 128k for opus).
    package var audioBitrate: Int?
    /// `channels` (int, default: the source's, within what the encoder takes): the output's audio channel count.
    package var channels: Int?
    /// `sampleRate` (Hz, default: the source's, within what the encoder takes): the output's audio sample rate.
    package var sampleRate: Int?
    /// `allAudio` (bool, default false): keep every audio stream of a video, not only the default one.
    package var allAudio: Bool?

    package init(
        quality: Double? = nil,
        width: Int? = nil,
        height: Int? = nil,
        strip: Bool? = nil,
        upscale: Bool? = nil,
        videoCodec: VideoCodec? = nil,
        crf: Int? = nil,
        videoBitrate: Int? = nil,
        preset: Preset? = nil,
        maxFrameRate: Double? = nil,
        audioCodec: AudioCodec? = nil,
        audioBitrate: Int? = nil,
        channels: Int? = nil,
        sampleRate: Int? = nil,
        allAudio: Bool? = nil
    ) {
        self.quality = quality
        self.width = width
        self.height = height
        self.strip = strip
        self.upscale = upscale
        self.videoCodec = videoCodec
        self.crf = crf
        self.videoBitrate = videoBitrate
        self.preset = preset
        self.maxFrameRate = maxFrameRate
        self.audioCodec = audioCodec
        self.audioBitrate = audioBitrate
        self.channels = channels
        self.sampleRate = sampleRate
        self.allAudio = allAudio
    }

    /// The quality as a fraction in (0, 1], whichever way it was written.
    package var qualityFraction: Double? {
        guard let quality else { return nil }
        return quality > 1 ? quality / 100 : quality
    }
}
