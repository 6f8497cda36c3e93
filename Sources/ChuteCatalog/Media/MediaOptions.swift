import ChuteCore

/// A video codec a rule can ask for with `videoCodec`, named as FFmpeg names it. Each container holds only some
/// (``TargetProfile``); the older ones are there for the containers made for them (MPEG-1 for `.mpg`, WMV 8 for
/// `.wmv`, RealVideo for `.rm`).
package enum VideoCodec: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case h264, hevc, vp9, av1
    case mpeg4, mpeg1video, mpeg2video, wmv2, flv1, rv10, theora, amv
}

/// What a rule's `videoCodec` asks for: a codec, or `copy`, which keeps the source's video as it is wherever the
/// container holds it (re-encoding it, in the container's first codec, only where it does not, or where another option
/// needs new pixels).
package enum VideoCodecChoice: Sendable, Hashable, OptionValueConvertible {
    case codec(VideoCodec)
    case copy

    /// The word a rule writes for `copy`.
    package static let copyName = "copy"

    package init?(optionValue: OptionValue) {
        guard case .text(let text) = optionValue else { return nil }
        if text == Self.copyName {
            self = .copy
        } else if let codec = VideoCodec(rawValue: text) {
            self = .codec(codec)
        } else {
            return nil
        }
    }

    package var optionValue: OptionValue {
        switch self {
        case .codec(let codec): .text(codec.rawValue)
        case .copy: .text(Self.copyName)
        }
    }

    /// The codec asked for, or `nil` for `copy`.
    package var codec: VideoCodec? {
        guard case .codec(let codec) = self else { return nil }
        return codec
    }
}

/// An audio codec a rule can ask for with `audioCodec`, named as FFmpeg names it (`pcm` is the byte order and depth
/// the container takes). Each format holds only some (``TargetProfile``).
package enum AudioCodec: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case aac, mp3, opus, vorbis, flac
    case mp2, ac3, wmav2
    case amrNB = "amr_nb"
    case gsm, dts, wavpack, speex, pcm
    case amvAudio = "adpcm_ima_amv"
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
        summary: "Let a video smaller than the box (`width`, `height`, `shortSide`, `longSide`) grow to fill it. "
            + "Needs one of them.",
        default: "`false`",
        stage: .resize,
        check: { upscale, context in
            guard upscale, PictureBox(context.options).isEmpty else { return nil }
            return OptionProblem(
                "'upscale' needs 'width', 'height', 'shortSide' or 'longSide' to grow towards",
                at: .key
            )
        },
        show: { $0 ? "upscale" : "no upscale" }
    )

    /// `videoCodec`: the codec of a video target.
    package static let videoCodec = RuleOption<VideoCodecChoice>(
        "videoCodec",
        .choice(VideoCodec.allCases.map(\.rawValue) + [VideoCodecChoice.copyName]),
        summary: "The video codec. The container must hold it: mp4 and mkv `h264`, `hevc`, `vp9` and `av1`; mov "
            + "`h264` and `hevc`; webm `vp9` and `av1`; the others as docs/formats.md lists them. `copy` keeps the "
            + "source's video as it is wherever the container holds it (mp4, mov and m4v otherwise copy only 8-bit "
            + "4:2:0 h264, which plays everywhere).",
        default: "the container's first in docs/formats.md: h264 (mp4, mov, mkv, ts, flv…), vp9 (webm)",
        stage: .encode,
        check: { choice, context in
            guard let codec = choice.codec else { return nil }
            let allowed = TargetProfile(context.format).videoCodecs
            guard !allowed.contains(codec) else { return nil }
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            return OptionProblem("\(context.format.name) cannot hold \(codec.rawValue) video; it holds: \(names)")
        },
        show: { "videoCodec \($0.optionValue)" }
    )

    /// `crf`: the constant-quality level.
    package static let crf = RuleOption<Int>(
        "crf",
        .integer(0...63),
        summary: "Constant quality, lower is better: 0–51 for h264 and hevc, 0–63 for vp9 and av1 (the older codecs "
            + "use a fixed quantizer instead). Not with `videoBitrate`.",
        default: "h264 23, hevc 28, vp9 and av1 32",
        stage: .encode,
        check: { crf, context in
            let codec = MediaOptions.videoCodec(in: context)
            if let codec, codec.defaultCRF == nil {
                return OptionProblem("'crf' applies to h264, hevc, vp9 and av1, not \(codec.rawValue)", at: .key)
            }
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
        summary: "The audio codec of a video. The container must hold it: mp4 and mov `aac` and `mp3`; mkv `aac`, "
            + "`opus`, `vorbis`, `mp3` and `flac`; webm `opus` and `vorbis`; the others as docs/formats.md lists them.",
        default: "the container's first in docs/formats.md: aac (mp4, mov, mkv, ts…), opus (webm)",
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
        summary: "The audio bitrate. Not for lossless audio (flac, wav, wv and the other PCM formats). AMR takes "
            + "the highest of its modes at or below it (4.75k to 12.2k).",
        default: "128k in videos; audio formats 192k (AMR 12.2k, DTS 768k, GSM 13k), opus 128k",
        stage: .encode,
        check: { _, context in
            let codec = MediaOptions.audioCodec(in: context)
            if codec == .gsm {
                return OptionProblem("'audioBitrate' does not apply to gsm, which is always 13k", at: .key)
            }
            guard codec == nil || codec?.isLossless == true else { return nil }
            let name = codec?.rawValue ?? "pcm"
            return OptionProblem("'audioBitrate' does not apply to lossless \(name) audio", at: .key)
        },
        show: { "audioBitrate \(ValueParsing.describe(bitrate: $0))" }
    )

    /// `channels`: the output's audio channel count.
    package static let channels = RuleOption<Int>(
        "channels",
        .integer(1...8),
        summary: "The number of audio channels (mp3, mp2, wma and speex hold at most 2; ac3 and dts 6; amv, amr "
            + "and gsm are mono).",
        default: "the source's, or the one the format takes",
        stage: .encode,
        check: { channels, context in
            let codec = MediaOptions.audioCodec(in: context)
            let required = TargetProfile(context.format).requiredChannels
            if let required, channels != required {
                return OptionProblem("\(context.format.name) takes only \(required) channel, found \(channels)")
            }
            guard let codec, let maximum = codec.maxChannels, channels > maximum else { return nil }
            return OptionProblem("'channels' must be between 1 and \(maximum) for \(codec.rawValue), found \(channels)")
        },
        show: { "channels \($0)" }
    )

    /// `sampleRate`: the output's audio sample rate.
    package static let sampleRate = RuleOption<Int>(
        "sampleRate",
        .integer(8000...192_000),
        summary: "The audio sample rate in Hz. mp3 takes 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100 or "
            + "48000; opus 8000, 12000, 16000, 24000 or 48000; aac 7350–96000 in the standard steps.",
        default: "the source's, or the nearest the encoder and the container take; amv 22050, mxf and vob 48000, amr "
            + "and gsm 8000, swf 44100, 22050 or 11025",
        stage: .encode,
        check: { rate, context in
            if let rates = TargetProfile(context.format).sampleRates, !rates.contains(rate) {
                let names = rates.map(String.init).joined(separator: ", ")
                return OptionProblem("\(context.format.name) takes only \(names) Hz, found \(rate)")
            }
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

    /// The video codec a rule's encodes end up with: its own, else the container's default (with `copy` too).
    package static func videoCodec(in context: OptionContext) -> VideoCodec? {
        context.options[Self.videoCodec]?.codec ?? TargetProfile(context.format).videoCodecs.first
    }

    /// The audio codec a rule ends up with: its own, else the target's; `nil` for PCM (wav, aiff, au…).
    package static func audioCodec(in context: OptionContext) -> AudioCodec? {
        context.options[Self.audioCodec] ?? TargetProfile(context.format).audioCodecs.first
    }
}

extension MediaOptions {
    /// The options a group of clips joined into one file takes: those that set the output's size, codecs and
    /// metadata. Options that edit each clip's time or picture (trim, crop, speed, loudness, …) would apply to every
    /// clip alike, which a rule that joins clips hardly means.
    package static let groupKeys: Set<String> = [
        CommonOptions.width.key, CommonOptions.height.key, CommonOptions.shortSide.key, CommonOptions.longSide.key,
        Self.upscale.key, Self.videoCodec.key, Self.crf.key, Self.videoBitrate.key, Self.preset.key,
        Self.audioCodec.key, Self.audioBitrate.key, Self.channels.key, Self.sampleRate.key, CommonOptions.metadata.key,
        CommonOptions.strip.key,
    ]

    /// The media engines' ``EngineDescriptor/joinsGroups``: every video and audio target joins clips, with the
    /// options of ``groupKeys`` alone.
    @Sendable package static func checkGroup(_ format: TargetFormat, _ options: ConversionOptions) -> String? {
        let refused = options.values.keys.filter { !Self.groupKeys.contains($0) }.sorted()
        guard !refused.isEmpty else { return nil }
        return "clips joined into one \(format.name) (groupBy) take only the options that set the output ("
            + Self.groupKeys.sorted().joined(separator: ", ") + "), not " + refused.joined(separator: ", ")
    }
}

extension EngineKind {
    /// The video engine's lane.
    package static let video = EngineKind(rawValue: "video")
    /// The audio engine's lane.
    package static let audio = EngineKind(rawValue: "audio")
}

extension Engines {
    /// What the video engine writes and takes. Video encoders use several threads per job, so it runs half as many
    /// jobs as there are cores; both media engines read video and audio containers (an audio target may come from a
    /// video's sound).
    package static let video = EngineDescriptor(
        kind: .video,
        library: "FFmpeg (libavformat, libavcodec, libswscale, libswresample, libavfilter)",
        reads: [.video, .audio],
        concurrency: .perTwoCores,
        formats: [
            TargetFormat(name: "mp4", category: .video, engine: .video, coder: "mp4"),
            TargetFormat(name: "mkv", aliases: ["matroska"], category: .video, engine: .video, coder: "matroska"),
            TargetFormat(name: "webm", category: .video, engine: .video, coder: "webm"),
            TargetFormat(name: "mov", category: .video, engine: .video, coder: "mov"),
            TargetFormat(name: "amv", category: .video, engine: .video, coder: "amv"),
            TargetFormat(name: "avi", category: .video, engine: .video, coder: "avi"),
            TargetFormat(name: "mpg", category: .video, engine: .video, coder: "mpeg"),
            // The ipod muxer is the MP4 family's for `.m4v` (the raw `m4v` muxer writes a bare MPEG-4 stream).
            TargetFormat(name: "m4v", category: .video, engine: .video, coder: "ipod"),
            TargetFormat(name: "wmv", category: .video, engine: .video, coder: "asf"),
            TargetFormat(name: "flv", category: .video, engine: .video, coder: "flv"),
            TargetFormat(name: "mpeg", category: .video, engine: .video, coder: "mpeg"),
            TargetFormat(name: "rm", aliases: ["realmedia"], category: .video, engine: .video, coder: "rm"),
            // A DVD's program stream (`vob`), not the `svcd` muxer that FFmpeg guesses from the extension.
            TargetFormat(name: "vob", category: .video, engine: .video, coder: "vob"),
            TargetFormat(name: "ts", aliases: ["mpegts"], category: .video, engine: .video, coder: "mpegts"),
            TargetFormat(name: "asf", category: .video, engine: .video, coder: "asf"),
            TargetFormat(name: "3gp", category: .video, engine: .video, coder: "3gp"),
            TargetFormat(name: "swf", category: .video, engine: .video, coder: "swf"),
            TargetFormat(name: "mxf", category: .video, engine: .video, coder: "mxf"),
            TargetFormat(name: "f4v", category: .video, engine: .video, coder: "f4v"),
            TargetFormat(name: "3g2", category: .video, engine: .video, coder: "3g2"),
            TargetFormat(name: "ogv", category: .video, engine: .video, coder: "ogv"),
        ],
        options: [
            CommonOptions.width.spec, CommonOptions.height.spec, CommonOptions.shortSide.spec,
            CommonOptions.longSide.spec, MediaOptions.upscale.spec, MediaOptions.videoCodec.spec,
            MediaOptions.crf.spec, MediaOptions.videoBitrate.spec,
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
        joinsGroups: MediaOptions.checkGroup,
        worker: "chute-media-worker"
    )

    /// What the audio engine writes and takes.
    package static let audio = EngineDescriptor(
        kind: .audio,
        library: "FFmpeg (libavformat, libavcodec, libswresample)",
        reads: [.video, .audio],
        concurrency: .perCore,
        formats: [
            TargetFormat(name: "mp3", category: .audio, engine: .audio, coder: "mp3"),
            TargetFormat(name: "m4a", category: .audio, engine: .audio, coder: "ipod"),
            // Raw AAC in ADTS frames; `m4a` is AAC in the MP4 family's container.
            TargetFormat(name: "aac", aliases: ["adts"], category: .audio, engine: .audio, coder: "adts"),
            TargetFormat(name: "opus", category: .audio, engine: .audio, coder: "opus"),
            TargetFormat(name: "ogg", aliases: ["vorbis"], category: .audio, engine: .audio, coder: "ogg"),
            TargetFormat(name: "flac", category: .audio, engine: .audio, coder: "flac"),
            TargetFormat(name: "wav", category: .audio, engine: .audio, coder: "wav"),
            TargetFormat(name: "ac3", category: .audio, engine: .audio, coder: "ac3"),
            TargetFormat(name: "wma", category: .audio, engine: .audio, coder: "asf"),
            TargetFormat(name: "amr", category: .audio, engine: .audio, coder: "amr"),
            TargetFormat(name: "aiff", aliases: ["aif"], category: .audio, engine: .audio, coder: "aiff"),
            TargetFormat(name: "mp2", category: .audio, engine: .audio, coder: "mp2"),
            TargetFormat(name: "gsm", category: .audio, engine: .audio, coder: "gsm"),
            TargetFormat(name: "dts", category: .audio, engine: .audio, coder: "dts"),
            TargetFormat(name: "au", category: .audio, engine: .audio, coder: "au"),
            TargetFormat(name: "caf", category: .audio, engine: .audio, coder: "caf"),
            TargetFormat(name: "wv", aliases: ["wavpack"], category: .audio, engine: .audio, coder: "wv"),
            TargetFormat(name: "oga", category: .audio, engine: .audio, coder: "oga"),
            TargetFormat(name: "w64", category: .audio, engine: .audio, coder: "w64"),
            TargetFormat(name: "voc", category: .audio, engine: .audio, coder: "voc"),
            // FFmpeg maps no muxer to `.snd`: it is Sun's `.au` under NeXT's name.
            TargetFormat(name: "snd", category: .audio, engine: .audio, coder: "au"),
            TargetFormat(name: "spx", aliases: ["speex"], category: .audio, engine: .audio, coder: "spx"),
            TargetFormat(name: "ircam", category: .audio, engine: .audio, coder: "ircam"),
        ],
        options: [
            MediaOptions.audioBitrate.spec, MediaOptions.channels.spec, MediaOptions.sampleRate.spec,
            MediaOptions.start.spec, MediaOptions.end.spec, MediaOptions.duration.spec, MediaOptions.trimExact.spec,
            CommonOptions.metadata.spec, CommonOptions.strip.spec, MediaOptions.coverArt.spec,
            MediaOptions.speed.spec, MediaOptions.loudness.spec,
        ],
        joinsGroups: MediaOptions.checkGroup,
        worker: "chute-media-worker"
    )
}
