import ChuteCore

/// What a target format holds and what Chute writes into it by default, with the constraints of its container that
/// Chute meets itself (a sample rate, a picture size in multiples of 16, standard frame rates).
package struct TargetProfile: Sendable {
    /// How a target carries subtitles.
    package enum Subtitles: Sendable {
        /// Not at all (audio targets, and containers without a text subtitle codec FFmpeg writes).
        case none
        /// Text subtitles, re-encoded with this encoder unless they already use its codec.
        case text(encoder: String)
        /// Whatever the muxer takes is copied; other text subtitles are re-encoded with this encoder.
        case copyOrText(encoder: String)
    }

    /// The frame rates of MPEG-1 and MPEG-2 video (`frame_rate_code` 1 to 8), which MPEG program streams, DVD and
    /// MXF expect.
    package static let standardFrameRates = [
        FrameRate(24000, 1001), FrameRate(24, 1), FrameRate(25, 1), FrameRate(30000, 1001), FrameRate(30, 1),
        FrameRate(50, 1), FrameRate(60000, 1001), FrameRate(60, 1),
    ]

    /// The format.
    package let format: TargetFormat
    /// The video codecs the container holds, the default first; empty for audio targets.
    package let videoCodecs: [VideoCodec]
    /// The audio codecs the container holds, the default first; for audio targets, the one codec of the format
    /// (PCM targets, `wav`, `aiff`, `au`…, have none: ``pcmCodecs`` says which PCM).
    package let audioCodecs: [AudioCodec]
    /// The PCM codecs the container takes, 16-bit first, then 24-bit when it holds that too.
    package let pcmCodecs: [PCMCodec]
    /// Whether the target is the one meant to play everywhere (mp4, mov, m4v): unless the rule names a `videoCodec` or
    /// says `videoCodec: copy`, only video that TVs, browsers and phones all play (8-bit 4:2:0 H.264) and AAC or MP3
    /// sound are copied into it; VP9, AV1, HEVC, 10-bit or 4:4:4 video is re-encoded to H.264 although the container
    /// could hold it.
    package let copiesOnlyPlayable: Bool
    /// Whether the muxer stores a display matrix (the MOV family does; FFmpeg 5.1's Matroska muxer drops it).
    package let keepsDisplayMatrix: Bool
    /// How subtitles are carried.
    package let subtitles: Subtitles
    /// Whether the muxer stores cover pictures (MP3's ID3, M4A's `covr`, FLAC's PICTURE).
    package let holdsCoverArt: Bool
    /// The bitrate of lossy audio when the rule sets none.
    package let defaultAudioBitrate: Int
    /// The one sample rate the format takes (AMV 22050 Hz, MXF and VOB 48 kHz, GSM and AMR 8 kHz), or `nil`.
    package let requiredSampleRate: Int?
    /// The sample rates the container takes, when it takes only some whatever the codec: SWF's sound header has
    /// room for 44100, 22050 and 11025 Hz alone ("swf does not support that sample rate"). `nil` for any the
    /// encoder takes.
    package let sampleRates: [Int]?
    /// Whether the container holds a picture only with sound beside it (AMV: exactly one of each).
    package let needsSound: Bool
    /// The most channels the container holds whatever the codec, or `nil`.
    package let maxChannels: Int?
    /// The one channel count the format takes (mono for AMV, GSM and AMR), or `nil`.
    package let requiredChannels: Int?
    /// What the picture's width and height must be multiples of: 16 for AMV and RealVideo, else 2 (4:2:0).
    package let sizeMultiple: Int
    /// The frame rates the container takes, or `nil` for any (the encoder may still have its own list).
    package let frameRates: [FrameRate]?
    /// The demuxer that reads the output back, by its FFmpeg name: raw formats such as GSM cannot be recognised from
    /// their content.
    package let demuxer: String

    /// Whether the target is a video container.
    package var isVideo: Bool { !self.videoCodecs.isEmpty }

    /// The profile of a video or audio target.
    package init(_ format: TargetFormat) {
        let name = format.name
        self.format = format
        self.copiesOnlyPlayable = ["mp4", "mov", "m4v"].contains(name)
        self.keepsDisplayMatrix = ["mp4", "mov", "m4v", "3gp", "3g2", "f4v"].contains(name)
        self.holdsCoverArt = ["mp3", "m4a", "flac"].contains(name)
        // DVD players take 48 kHz only.
        self.requiredSampleRate = ["amv": 22050, "mxf": 48000, "vob": 48000, "gsm": 8000, "amr": 8000][name]
        self.sampleRates = self.requiredSampleRate.map { [$0] } ?? ["swf": [44100, 22050, 11025]][name]
        self.requiredChannels = ["amv": 1, "gsm": 1, "amr": 1][name]
        self.sizeMultiple = name == "amv" || name == "rm" ? 16 : 2
        // AMV's 22050 Hz sound comes in one block per frame, which the muxer wants a whole number of samples.
        self.frameRates =
            ["mpg", "mpeg", "vob", "mxf"].contains(name)
            ? Self.standardFrameRates : name == "amv" ? [10, 14, 15, 18, 21, 25, 30].map { FrameRate($0, 1) } : nil
        // VOC's sound blocks hold one or two channels.
        self.maxChannels = name == "voc" ? 2 : nil
        self.needsSound = name == "amv"
        let videos: [String: [VideoCodec]] = [
            "mp4": [.h264, .hevc, .vp9, .av1], "mov": [.h264, .hevc], "mkv": [.h264, .hevc, .vp9, .av1],
            "webm": [.vp9, .av1], "m4v": [.h264, .mpeg4], "avi": [.mpeg4, .h264], "mpg": [.mpeg1video, .mpeg2video],
            "mpeg": [.mpeg1video, .mpeg2video], "vob": [.mpeg2video], "ts": [.h264, .hevc, .mpeg2video],
            "wmv": [.wmv2], "asf": [.wmv2], "flv": [.h264, .flv1], "f4v": [.h264], "rm": [.rv10], "swf": [.flv1],
            "3gp": [.h264], "3g2": [.h264], "mxf": [.mpeg2video], "ogv": [.theora], "amv": [.amv],
        ]
        let audios: [String: [AudioCodec]] = [
            "mp4": [.aac, .mp3], "mov": [.aac, .mp3], "mkv": [.aac, .opus, .vorbis, .mp3, .flac],
            "webm": [.opus, .vorbis], "m4v": [.aac, .ac3], "avi": [.mp3, .aac, .ac3, .mp2],
            "mpg": [.mp2, .mp3, .ac3], "mpeg": [.mp2, .mp3, .ac3], "vob": [.ac3, .mp2], "ts": [.aac, .mp2, .ac3, .mp3],
            "wmv": [.wmav2, .mp3], "asf": [.wmav2, .mp3], "flv": [.aac, .mp3], "f4v": [.aac, .mp3], "rm": [.ac3],
            "swf": [.mp3], "3gp": [.aac], "3g2": [.aac], "mxf": [.pcm], "ogv": [.vorbis, .opus, .flac],
            "amv": [.amvAudio],
            // Audio targets: the one codec of each (PCM targets have none).
            "mp3": [.mp3], "m4a": [.aac], "aac": [.aac], "opus": [.opus], "ogg": [.vorbis], "flac": [.flac],
            "ac3": [.ac3], "wma": [.wmav2], "amr": [.amrNB], "mp2": [.mp2], "gsm": [.gsm], "dts": [.dts],
            "wv": [.wavpack], "oga": [.flac], "spx": [.speex],
        ]
        self.videoCodecs = videos[name] ?? []
        self.audioCodecs = audios[name] ?? []
        switch name {
        case "aiff", "au", "snd", "caf":
            self.pcmCodecs = [.signed16BigEndian, .signed24BigEndian]
        case "voc":
            self.pcmCodecs = [.signed16LittleEndian]
        default:
            self.pcmCodecs = [.signed16LittleEndian, .signed24LittleEndian]
        }
        switch name {
        case "mp4", "mov", "m4v", "3gp", "3g2":
            self.subtitles = .text(encoder: "mov_text")
        case "mkv":
            self.subtitles = .copyOrText(encoder: "srt")
        case "webm":
            self.subtitles = .text(encoder: "webvtt")
        default:
            self.subtitles = .none
        }
        let demuxers: [String: String] = [
            "mkv": "matroska", "webm": "matroska", "avi": "avi", "amv": "avi", "mpg": "mpeg", "mpeg": "mpeg",
            "vob": "mpeg", "ts": "mpegts", "wmv": "asf", "asf": "asf", "wma": "asf", "flv": "flv", "rm": "rm",
            "swf": "swf", "mxf": "mxf", "ogv": "ogg", "ogg": "ogg", "opus": "ogg", "oga": "ogg", "spx": "ogg",
            "mp3": "mp3", "mp2": "mp3", "snd": "au",
        ]
        let movFamily = ["mp4", "mov", "m4v", "m4a", "3gp", "3g2", "f4v"]
        self.demuxer = movFamily.contains(name) ? "mov" : demuxers[name] ?? name
        // FFmpeg's DTS encoder refuses stereo below 256k; 768k is the DVD's "half rate".
        self.defaultAudioBitrate =
            name == "dts" ? 768_000 : self.videoCodecs.isEmpty && name != "opus" ? 192_000 : 128_000
    }

    /// The nearest size the container takes: some take only multiples of 16 (AMV, RealVideo), and the nearest one
    /// barely stretches the picture.
    package func fitting(_ size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        let multiple = self.sizeMultiple
        guard multiple > 2 else { return size }
        func round(_ value: Int) -> Int { max(multiple, (value + multiple / 2) / multiple * multiple) }
        return (round(size.width), round(size.height))
    }
}

/// A PCM codec a container takes: 16- or 24-bit signed samples, in one byte order.
package enum PCMCodec: Sendable, Equatable {
    case signed16LittleEndian
    case signed24LittleEndian
    case signed16BigEndian
    case signed24BigEndian
}

/// A frame rate, as the fraction a container stores.
package struct FrameRate: Sendable, Equatable {
    package var numerator: Int32
    package var denominator: Int32

    package init(_ numerator: Int32, _ denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }
}
