import ChuteCore

/// A video codec a rule can ask for with `videoCodec`.
package enum VideoCodec: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case h264, hevc, vp9, av1
}

/// An audio codec a rule can ask for with `audioCodec`.
package enum AudioCodec: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case aac, mp3, opus, vorbis, flac
}

/// An encoder speed preset of x264 and x265, fastest first.
package enum Preset: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow, placebo
}

/// The options of the video and audio engines (besides ``CommonOptions``), each checked against what the target
/// container and its codecs take (``TargetProfile``).
package enum MediaOptions {
    /// `upscale`: let a smaller video grow to the box.
    package static let upscale = RuleOption<Bool>(
        "upscale",
        .flag,
        summary: "Let a video smaller than `width`/`height` grow to fill the box. Needs `width` or `height`.",
        default: "`false`",
        stage: .resize,
        check: { upscale, context in
            guard upscale, context.options[CommonOptions.width] == nil, context.options[CommonOptions.height] == nil
            else { return nil }
            return OptionProblem("'upscale' needs 'width' or 'height' to grow towards", at: .key)
        },
        show: { $0 ? "upscale" : "no upscale" }
    )

    /// `videoCodec`: the codec of a video target.
    package static let videoCodec = RuleOption<VideoCodec>(
        "videoCodec",
        .choice(VideoCodec.allCases.map(\.rawValue)),
        summary: "The video codec. The container must hold it: mp4 and mkv all four, mov `h264` and `hevc`, webm "
            + "`vp9` and `av1`.",
        default: "h264 (mp4, mov, mkv), vp9 (webm)",
        stage: .encode,
        check: { codec, context in
            let allowed = TargetProfile(context.format).videoCodecs
            guard !allowed.contains(codec) else { return nil }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            return OptionProblem("\(context.format.name) cannot hold \(codec.rawValue) video; it holds: \(names)")
        },
        show: { "videoCodec \($0.rawValue)" }
    )

    /// `crf`: the constant-quality level.
    package static let crf = RuleOption<Int>(
        "crf",
        .integer(0...63),
        summary: "Constant quality, lower is better: 0–51 for h264 and hevc, 0–63 for vp9 and av1. Not with "
            + "`videoBitrate`.",
        default: "h264 23, hevc 28, vp9 and av1 32",
        stage: .encode,
        check: { crf, context in
            let codec = MediaOptions.videoCodec(in: context)
            let maximum = codec == .h264 || codec == .hevc ? 51 : 63
            guard crf > maximum else { return nil }
            let name = codec.map { " for \($0.rawValue)" } ?? ""
            return OptionProblem("'crf' must be between 0 and \(maximum)\(name), found \(crf)")
        },
        show: { "crf \($0)" }
    )

    /// `videoBitrate`: an average bitrate instead of constant quality.
    package static let videoBitrate = RuleOption<Int>(
        "videoBitrate",
        .bitrate(16_000...1_000_000_000),
        summary: "An average video bitrate instead of constant quality, such as `2.5M`. Not with `crf`.",
        stage: .encode,
        check: { _, context in
            guard context.options[MediaOptions.crf] != nil else { return nil }
            return OptionProblem("set either 'crf' or 'videoBitrate', not both", at: .key)
        },
        show: { "videoBitrate \(ValueParsing.describe(bitrate: $0))" }
    )

    /// `preset`: the x264/x265 speed preset.
    package static let preset = RuleOption<Preset>(
        "preset",
        .choice(Preset.allCases.map(\.rawValue)),
        summary: "The x264/x265 speed preset, from `ultrafast` to `placebo`. h264 and hevc only.",
        default: "`medium`",
        stage: .encode,
        check: { _, context in
            guard let codec = MediaOptions.videoCodec(in: context), codec != .h264 && codec != .hevc else {
                return nil
            }
            return OptionProblem("'preset' applies to h264 and hevc video, not \(codec.rawValue)", at: .key)
        },
        show: { "preset \($0.rawValue)" }
    )

    /// `maxFrameRate`: frames are dropped above this rate.
    package static let maxFrameRate = RuleOption<Double>(
        "maxFrameRate",
        .number(NumberRange(above: 0, upTo: 240)),
        summary: "Frames are dropped to stay at or below this rate, such as `30` or `29.97`.",
        stage: .resize,
        show: { "maxFrameRate \(OptionValue.number($0))" }
    )

    /// `audioCodec`: the audio codec of a video target.
    package static let audioCodec = RuleOption<AudioCodec>(
        "audioCodec",
        .choice(AudioCodec.allCases.map(\.rawValue)),
        summary: "The audio codec of a video. The container must hold it: mp4 and mov `aac` and `mp3`, mkv all five, "
            + "webm `opus` and `vorbis`.",
        default: "aac (mp4, mov, mkv), opus (webm)",
        stage: .encode,
        check: { codec, context in
            let allowed = TargetProfile(context.format).audioCodecs
            guard !allowed.contains(codec) else { return nil }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            return OptionProblem("\(context.format.name) cannot hold \(codec.rawValue) audio; it holds: \(names)")
        },
        show: { "audioCodec \($0.rawValue)" }
    )

    /// `audioBitrate`: the bitrate of lossy audio.
    package static let audioBitrate = RuleOption<Int>(
        "audioBitrate",
        .bitrate(8000...512_000),
        summary: "The audio bitrate. Not for lossless audio (flac, wav).",
        default: "128k in videos; mp3, m4a and ogg 192k; opus 128k",
        stage: .encode,
        check: { _, context in
            let codec = MediaOptions.audioCodec(in: context)
            guard codec == nil || codec == .flac else { return nil }
            let name = codec?.rawValue ?? "pcm"
            return OptionProblem("'audioBitrate' does not apply to lossless \(name) audio", at: .key)
        },
        show: { "audioBitrate \(ValueParsing.describe(bitrate: $0))" }
    )

    /// `channels`: the output's audio channel count.
    package static let channels = RuleOption<Int>(
        "channels",
        .integer(1...8),
        summary: "The number of audio channels (mp3 holds at most 2).",
        default: "the source's",
        stage: .encode,
        check: { channels, context in
            let codec = MediaOptions.audioCodec(in: context)
            guard codec == .mp3, channels > 2 else { return nil }
            return OptionProblem("'channels' must be between 1 and 2 for mp3, found \(channels)")
        },
        show: { "channels \($0)" }
    )

    /// `sampleRate`: the output's audio sample rate.
    package static let sampleRate = RuleOption<Int>(
        "sampleRate",
        .integer(8000...192_000),
        summary: "The audio sample rate in Hz. mp3 takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 or "
            + "48000; opus 8000, 12000, 16000, 24000 or 48000; aac 7350–96000 in the standard steps.",
        default: "the source's, or the nearest the encoder takes",
        stage: .encode,
        check: { rate, context in
            guard let codec = MediaOptions.audioCodec(in: context), let rates = codec.sampleRates,
                !rates.contains(rate)
            else { return nil }
            let names = rates.map(String.init).joined(separator: ", ")
            return OptionProblem("\(codec.rawValue) cannot use \(rate) Hz; it takes: \(names)")
        },
        show: { "sampleRate \($0)" }
    )

    /// `allAudio`: keep every audio stream of a video.
    package static let allAudio = RuleOption<Bool>(
        "allAudio",
        .flag,
        summary: "Keep every audio stream of a video, not only the main one.",
        default: "`false`",
        stage: .streams,
        show: { $0 ? "allAudio" : "default audio only" }
    )

    /// The video codec a rule ends up with: its own, else the container's default.
    static func videoCodec(in context: OptionContext) -> VideoCodec? {
        context.options[Self.videoCodec] ?? TargetProfile(context.format).videoCodecs.first
    }

    /// The audio codec a rule ends up with: its own, else the target's; `nil` for PCM (wav).
    static func audioCodec(in context: OptionContext) -> AudioCodec? {
        context.options[Self.audioCodec] ?? TargetProfile(context.format).audioCodecs.first
    }
}

extension EngineKind {
    /// The video engine's lane.
    package static let video = EngineKind(rawValue: "video")
    /// The audio engine's lane.
    package static let audio = EngineKind(rawValue: "audio")
}

extension MediaEngine {
    /// What the video engine writes and takes. Video encoders use several threads per job, so it runs half as many
    /// jobs as there are cores; both media engines read video and audio containers (an audio target may come from a
    /// video's sound).
    package static let videoDescriptor = EngineDescriptor(
        kind: .video,
        library: "FFmpeg (libavformat, libavcodec, libswscale, libswresample, libavfilter)",
        reads: [.video, .audio],
        concurrency: .perTwoCores,
        formats: [
            TargetFormat(name: "mp4", category: .video, engine: .video, coder: "mp4"),
            TargetFormat(name: "mkv", aliases: ["matroska"], category: .video, engine: .video, coder: "matroska"),
            TargetFormat(name: "webm", category: .video, engine: .video, coder: "webm"),
            TargetFormat(name: "mov", category: .video, engine: .video, coder: "mov"),
        ],
        options: [
            CommonOptions.width.spec, CommonOptions.height.spec, MediaOptions.upscale.spec,
            MediaOptions.videoCodec.spec, MediaOptions.crf.spec, MediaOptions.videoBitrate.spec,
            MediaOptions.preset.spec, MediaOptions.maxFrameRate.spec, MediaOptions.audioCodec.spec,
            MediaOptions.audioBitrate.spec, MediaOptions.channels.spec, MediaOptions.sampleRate.spec,
            MediaOptions.allAudio.spec, CommonOptions.maxFileSize.spec,
            MediaOptions.start.spec, MediaOptions.end.spec, MediaOptions.duration.spec, MediaOptions.trimExact.spec,
            CommonOptions.crop.spec, CommonOptions.gravity.spec, CommonOptions.rotate.spec, CommonOptions.flip.spec,
            CommonOptions.flop.spec, CommonOptions.background.spec, CommonOptions.aspect.spec,
            CommonOptions.aspectMode.spec, CommonOptions.metadata.spec, CommonOptions.strip.spec,
            MediaOptions.speed.spec, MediaOptions.mute.spec, MediaOptions.loudness.spec,
        ],
        // A poster frame or a sticker from a video; pictures stay with the image engine.
        alsoWrites: [
            EngineDescriptor.AlsoWrites(["jpg", "png"], from: [.video], options: MediaOptions.posterKeys),
            EngineDescriptor.AlsoWrites(["webp", "gif"], from: [.video], options: MediaOptions.stickerKeys),
        ],
        // FFmpeg's codecs pick their own thread counts, as the `ffmpeg` CLI does.
        make: { _ in MediaEngine(kind: .video) }
    )

    /// What the audio engine writes and takes.
    package static let audioDescriptor = EngineDescriptor(
        kind: .audio,
        library: "FFmpeg (libavformat, libavcodec, libswresample)",
        reads: [.video, .audio],
        concurrency: .perCore,
        formats: [
            TargetFormat(name: "mp3", category: .audio, engine: .audio, coder: "mp3"),
            TargetFormat(name: "m4a", aliases: ["aac"], category: .audio, engine: .audio, coder: "ipod"),
            TargetFormat(name: "opus", category: .audio, engine: .audio, coder: "opus"),
            TargetFormat(name: "ogg", aliases: ["vorbis"], category: .audio, engine: .audio, coder: "ogg"),
            TargetFormat(name: "flac", category: .audio, engine: .audio, coder: "flac"),
            TargetFormat(name: "wav", category: .audio, engine: .audio, coder: "wav"),
        ],
        options: [
            MediaOptions.audioBitrate.spec, MediaOptions.channels.spec, MediaOptions.sampleRate.spec,
            MediaOptions.start.spec, MediaOptions.end.spec, MediaOptions.duration.spec, MediaOptions.trimExact.spec,
            CommonOptions.metadata.spec, CommonOptions.strip.spec, MediaOptions.coverArt.spec,
            MediaOptions.speed.spec, MediaOptions.loudness.spec,
        ],
        make: { _ in MediaEngine(kind: .audio) }
    )
}
