import CFFmpeg
import ChuteCatalog
import ChuteCore

/// How one video or audio option bears on copying a stream's packets as they are.
///
/// A plan copies a stream only when every option the rule sets allows it, so a source that already complies is
/// remuxed, and an option can never be ignored on a remux. Every option of the media engines declares its effect in
/// ``MediaOptions/streamCopy``; an option without an entry forces a re-encode, and a test fails for it.
enum StreamCopy: Sendable {
    /// A condition on the stream, given the rule's options: the stream is copied only when it holds.
    typealias Condition = @Sendable (SourceStream, ConversionOptions) -> Bool

    /// It acts on the container or on which streams are kept, never on the packets.
    case container
    /// It is a setting of the encoder, used only when the stream is re-encoded for another reason.
    case whenEncoding
    /// A video stream is copied only when the condition holds for it.
    case video(Condition)
    /// An audio stream is copied only when the condition holds for it.
    case audio(Condition)
    /// A video or audio stream is copied only when the condition holds for it.
    case stream(Condition)

    /// Whether the options the rule sets let `source`, a video or audio stream, be copied.
    static func allows(_ source: SourceStream, _ options: ConversionOptions) -> Bool {
        options.values.keys.allSatisfy { key in
            switch MediaOptions.streamCopy[key] {
            case nil:
                // An option that does not say what it does to a stream is never skipped by copying one.
                return false
            case .container, .whenEncoding:
                return true
            case .video(let condition):
                return source.kind != .video || condition(source, options)
            case .audio(let condition):
                return source.kind != .audio || condition(source, options)
            case .stream(let condition):
                return condition(source, options)
            }
        }
    }
}

extension MediaOptions {
    /// What every option of the video and audio engines does to copying a stream, by key.
    static let streamCopy: [String: StreamCopy] = [
        CommonOptions.width.key: .video(Self.fitsBox),
        CommonOptions.height.key: .video(Self.fitsBox),
        CommonOptions.shortSide.key: .video(Self.fitsBox),
        CommonOptions.longSide.key: .video(Self.fitsBox),
        Self.upscale.key: .video(Self.fitsBox),
        Self.videoCodec.key: .video { source, options in
            options[Self.videoCodec]?.codec.map { $0.codecID == source.codecID } ?? true
        },
        Self.crf.key: .video { _, _ in false },
        Self.videoBitrate.key: .video { source, options in
            options[Self.videoBitrate].map { ConversionPlan.within(source.bitRate, $0) } ?? true
        },
        Self.preset.key: .whenEncoding,
        Self.maxFrameRate.key: .video { source, options in
            guard let rate = options[Self.maxFrameRate] else { return true }
            return source.frameRate.map { $0 <= rate + 0.01 } ?? false
        },
        Self.audioCodec.key: .audio { source, options in
            options[Self.audioCodec].map { $0.codecID == source.codecID } ?? true
        },
        Self.audioBitrate.key: .audio { source, options in
            // Lossless audio has no bitrate to lower; lossy audio must be shown to be within the rule's limit.
            source.isLossless || options[Self.audioBitrate].map { ConversionPlan.within(source.bitRate, $0) } ?? true
        },
        Self.channels.key: .audio { source, options in
            options[Self.channels].map { $0 == source.channels } ?? true
        },
        Self.sampleRate.key: .audio { source, options in
            options[Self.sampleRate].map { $0 == source.sampleRate } ?? true
        },
        Self.allAudio.key: .container,
        Self.start.key: .stream(Self.copiesOnKeyframes),
        Self.end.key: .stream(Self.copiesOnKeyframes),
        Self.duration.key: .stream(Self.copiesOnKeyframes),
        Self.trimExact.key: .container,
        CommonOptions.crop.key: .video { _, _ in false },
        CommonOptions.gravity.key: .whenEncoding,
        CommonOptions.rotate.key: .video(Self.turnsByMatrix),
        CommonOptions.flip.key: .video { _, options in options[CommonOptions.flip] != true },
        CommonOptions.flop.key: .video { _, options in options[CommonOptions.flop] != true },
        CommonOptions.aspect.key: .video { source, options in
            options[CommonOptions.aspect].flatMap(AspectRatio.init).map { VideoGeometry.has(source, ratio: $0) }
                ?? true
        },
        CommonOptions.aspectMode.key: .whenEncoding,
        CommonOptions.background.key: .whenEncoding,
        CommonOptions.metadata.key: .container,
        CommonOptions.strip.key: .container,
        Self.coverArt.key: .container,
        Self.speed.key: .stream { _, options in options[Self.speed].map { $0 == 1 } ?? true },
        Self.mute.key: .container,
        Self.loudness.key: .audio { _, _ in false },
        // Two passes at a computed bitrate: always a new encode.
        CommonOptions.maxFileSize.key: .video { _, _ in false },
    ]

    /// Whether a video's picture already fits the rule's box (`width`, `height`, `shortSide`, `longSide`,
    /// `upscale`).
    private static let fitsBox: StreamCopy.Condition = { source, options in
        let box = PictureBox(options).limits(for: source.displaySize)
        return ConversionPlan.fits(
            source.displaySize,
            width: box.width,
            height: box.height,
            upscale: options[Self.upscale] == true
        )
    }
}

extension MediaOptions {
    /// Whether a stream may be copied under the rule's trim: only when it may be cut on keyframes.
    static let copiesOnKeyframes: StreamCopy.Condition = { _, options in
        options[Self.trimExact] == false
    }

    /// Whether the rule's `rotate` can be said by the display matrix alone, the packets copied: the source's matrix
    /// does not mirror, and nothing else moves the pixels. (The container must keep a matrix too, which the plan
    /// checks.)
    static let turnsByMatrix: StreamCopy.Condition = { source, options in
        source.displayMatrix?.isMirrored != true && !VideoGeometry(options).editsPixels
    }
}
