import CFFmpeg
import ChuteCatalog
import ChuteCore

/// What to do with each input stream: which are kept, and whether each is copied as it is or re-encoded, with what
/// size, codec and settings.
///
/// A stream is copied when it already satisfies the rule: its codec is one the target holds (and the one the rule
/// names, if it names one), it fits the size box, its bitrate and frame rate are within the limits the rule sets (up
/// to 10 % over counts as within; an unknown bitrate does not pass a limit; the default bitrates are what an encode
/// gets, so 320k AAC is copied into a video unless the rule sets `audioBitrate`), every option the rule sets
/// allows it (``StreamCopy``: no `crf` asks for a new encode, for one), and its rotation survives in the target. A plan
/// that copies every stream is a remux.
struct ConversionPlan {
    /// The video stream's treatment.
    struct Video {
        let source: SourceStream
        /// Whether the packets are copied unchanged.
        let isCopy: Bool
        let codec: VideoCodec
        /// The encoded picture size (before the display matrix, when one is kept).
        let width: Int
        let height: Int
        /// The filters between decoder and encoder: speed, rotation, crop, turns and mirrors, scaling, aspect, pixel
        /// format.
        var filters: [String]
        /// The rule's frame-rate cap, when the source may exceed it: the encoder's time base becomes one frame at this
        /// rate, and frames that land on a taken tick are dropped (never duplicated, unlike FFmpeg's `fps` filter).
        let maxFrameRate: Double?
        /// The matrix to attach to the output stream, when the container keeps it.
        let keptMatrix: DisplayMatrix?
        /// The frame rates the container takes (the nearest is used), or `nil` for any.
        let frameRates: [AVRational]?
        /// The colour description to give the encoder instead of the source's (clips made one shape), if any.
        var colour: VideoColour? = nil
    }

    /// One audio stream's treatment.
    struct Audio {
        let source: SourceStream
        let isCopy: Bool
        let encoding: AudioEncoding
        /// Bits per second, for lossy codecs.
        let bitRate: Int?
        /// The rule's sample rate and channel count; `nil` keeps the source's where the encoder takes it.
        let sampleRate: Int?
        let channels: Int?
        /// The sample rates the container takes, when it takes only some (``TargetProfile/sampleRates``): without a
        /// rate of the rule's, the encoder gets the nearest of these.
        var containerRates: [Int]? = nil
        /// The filters between decoder and resampler: tempo, gain.
        var filters: [String] = []
    }

    /// One subtitle stream's treatment.
    struct Subtitle {
        let source: SourceStream
        /// The encoder that re-encodes it, or `nil` to copy it.
        let encoderName: String?
    }

    /// How far above a bitrate limit a stream may be and still count as within it: containers report average
    /// rates, and an encoder asked for 128k delivers a little more or less.
    static let bitRateSlack = 1.1

    let profile: TargetProfile
    var video: Video?
    var audio: [Audio] = []
    var subtitles: [Subtitle] = []
    /// Cover pictures, copied.
    var covers: [SourceStream] = []
    /// What the plan leaves out or cannot do exactly, for the report.
    var warnings: [String] = []

    /// Whether every kept stream is copied.
    var isRemux: Bool {
        (self.video?.isCopy ?? true) && self.audio.allSatisfy(\.isCopy)
            && self.subtitles.allSatisfy { $0.encoderName == nil }
    }

    /// Plans a conversion.
    ///
    /// - Parameters:
    ///   - sources: every input stream, in index order.
    ///   - inputFormat: the input's demuxer, such as `avi`.
    ///   - bestVideo: the index of the stream FFmpeg picks as the main video, if any.
    ///   - bestAudio: the index of the main audio stream, if any.
    ///   - format: the target.
    ///   - muxer: the target's muxer, which says what subtitle codecs it takes.
    ///   - options: the rule's options.
    /// - Throws: ``FFmpegError`` with code `unsupportedStream` when the input has nothing the target can hold.
    init(
        sources: [SourceStream],
        inputFormat: String,
        bestVideo: Int?,
        bestAudio: Int?,
        format: TargetFormat,
        muxer: UnsafePointer<AVOutputFormat>,
        options: ConversionOptions
    ) throws(FFmpegError) {
        self.profile = TargetProfile(format)
        if self.profile.isVideo, let bestVideo, sources[bestVideo].kind == .video {
            self.video = try self.planVideo(sources[bestVideo], inputFormat: inputFormat, options: options)
        }
        let isMuted = self.profile.isVideo && options[MediaOptions.mute] == true
        var audioSources = isMuted ? [] : bestAudio.map { [sources[$0]] } ?? []
        if self.profile.isVideo && options[MediaOptions.allAudio] == true && !isMuted {
            audioSources = []
            for source in sources where source.kind == .audio {
                // As FFmpeg's own stream selection does, leave out audio that it cannot decode or knows nothing of.
                guard avcodec_find_decoder(source.codecID) != nil, source.channels > 0, source.sampleRate > 0 else {
                    self.warnings.append(
                        "audio stream #\(source.index) (\(source.codecName)) was dropped: it cannot be decoded"
                    )
                    continue
                }
                audioSources.append(source)
            }
        }
        self.audio = audioSources.map { self.planAudio($0, options: options) }
        if self.profile.isVideo {
            for source in sources where source.kind == .subtitle {
                self.planSubtitle(source, muxer: muxer)
            }
        } else if self.profile.holdsCoverArt && options[MediaOptions.coverArt] != .drop {
            self.covers = sources.filter {
                $0.kind == .coverArt && ($0.codecID == AV_CODEC_ID_MJPEG || $0.codecID == AV_CODEC_ID_PNG)
            }
        }
        if self.audio.isEmpty, !isMuted, let mute = sources.first(where: { $0.kind == .audio }) {
            // FFmpeg's stream selection skips audio it knows nothing about; converting without it would make a
            // mute copy of a film that has sound.
            throw FFmpegError(
                .unsupportedStream,
                "av_find_best_stream",
                status: chute_averror_decoder_not_found(),
                detail: "the input's audio (stream #\(mute.index), codec \(mute.codecName)) cannot be decoded"
            )
        }
        if self.profile.needsSound && self.audio.isEmpty {
            throw FFmpegError(
                .unsupportedStream,
                "av_find_best_stream",
                status: chute_averror_stream_not_found(),
                detail: "a \(format.name) file holds one picture and one sound stream, and the input has no sound"
            )
        }
        if self.video == nil && self.audio.isEmpty {
            let wanted = self.profile.isVideo ? "video or audio stream" : "audio stream"
            throw FFmpegError(
                .unsupportedStream,
                "av_find_best_stream",
                status: chute_averror_stream_not_found(),
                detail: "the input has no \(wanted) for a \(format.name) output"
            )
        }
    }

    private mutating func planVideo(
        _ source: SourceStream,
        inputFormat: String,
        options: ConversionOptions
    ) throws(FFmpegError) -> Video {
        let choice = options[MediaOptions.videoCodec]
        let codec = choice?.codec ?? self.profile.videoCodecs[0]
        let allowed = choice?.codec.map { [$0] } ?? self.profile.videoCodecs
        // A target meant to play everywhere copies only what plays everywhere, unless the rule chose the codec.
        let playable = choice != nil || !self.profile.copiesOnlyPlayable || Self.playsEverywhere(source)
        let geometry = VideoGeometry(options)
        let sourceMatrix = source.displayMatrix
        // The rule's quarter turns go into the display matrix where the container keeps one and nothing else moves
        // the pixels; otherwise the pixels are turned.
        let turnsByMatrix =
            geometry.degrees != 0 && self.profile.keepsDisplayMatrix && MediaOptions.turnsByMatrix(source, options)
        let matrix =
            turnsByMatrix
            ? DisplayMatrix(clockwiseDegrees: ((sourceMatrix?.clockwiseDegrees ?? 0) + geometry.degrees) % 360)
            : sourceMatrix
        let rotates = (matrix?.clockwiseDegrees ?? 0) != 0 || matrix?.isMirrored == true
        let display = matrix?.swapsDimensions == true ? (source.height, source.width) : (source.width, source.height)
        let canCopy =
            allowed.contains { $0.codecID == source.codecID } && playable && StreamCopy.allows(source, options)
            // A stream that probing could not make sense of is decoded, which tells whether it is damaged.
            && source.width > 0 && source.height > 0 && source.hasPixelFormat
            && (!rotates || self.profile.keepsDisplayMatrix)
            // The rule's turn is copied only as a matrix.
            && (geometry.degrees == 0 || turnsByMatrix)
            // AVI stores no presentation times, which reordered (B-frame) video cannot do without.
            && !(inputFormat == "avi" && source.reorderDelay > 0)
        if canCopy {
            let codec = allowed.first { $0.codecID == source.codecID } ?? codec
            return Video(
                source: source,
                isCopy: true,
                codec: codec,
                width: source.width,
                height: source.height,
                filters: [],
                maxFrameRate: nil,
                keptMatrix: matrix,
                frameRates: nil
            )
        }

        var filters: [String] = []
        var coded: (width: Int, height: Int)
        let keptMatrix: DisplayMatrix?
        let editsPixels = geometry.editsPixels || (geometry.degrees != 0 && !turnsByMatrix)
        if editsPixels || (rotates && !self.profile.keepsDisplayMatrix) {
            // The pixels are turned as a player would show them (the container would lose the matrix, or the rule
            // crops, turns, mirrors or reshapes what is shown), then edited in the order of the stages.
            var size = (width: source.width, height: source.height)
            if let sourceMatrix, sourceMatrix.clockwiseDegrees != 0 || sourceMatrix.isMirrored {
                filters += sourceMatrix.rotationFilters
                if sourceMatrix.swapsDimensions {
                    size = (size.height, size.width)
                }
                if sourceMatrix.isMirrored {
                    self.warnings.append(
                        "the input's display matrix also mirrors the picture; only its rotation was applied to the "
                            + "pixels"
                    )
                }
            }
            filters += try geometry.orientationFilters(size: &size)
            let box = PictureBox(options).limits(for: size)
            let target = Self.fit(
                size,
                width: box.width,
                height: box.height,
                upscale: options[MediaOptions.upscale] == true
            )
            if target != size {
                filters.append("scale=w=\(target.width):h=\(target.height):flags=bicubic")
                size = target
            }
            filters += geometry.aspectFilters(size: &size)
            coded = self.profile.fitting(size)
            if coded != size {
                filters.append("scale=w=\(coded.width):h=\(coded.height):flags=bicubic")
            }
            keptMatrix = nil
        } else {
            let box = PictureBox(options).limits(for: display)
            let target = Self.fit(
                display,
                width: box.width,
                height: box.height,
                upscale: options[MediaOptions.upscale] == true
            )
            coded = matrix?.swapsDimensions == true ? (target.height, target.width) : target
            keptMatrix = matrix
            coded = self.profile.fitting(coded)
            if source.width != coded.width || source.height != coded.height {
                filters.append("scale=w=\(coded.width):h=\(coded.height):flags=bicubic")
            }
        }
        // A container of fixed frame rates (MPEG's, AMV's) counts frames rather than reading their times: the frames
        // are made to fall on the nearest rate's ticks, repeated or dropped, as the `ffmpeg` CLI does for them. The
        // source's average rate is its real one (a 30 fps clip may declare 60 as the rate of its time base).
        if let rates = self.profile.frameRates, let sourceRate = source.frameRate {
            let rate = rates.min { abs($0.value - sourceRate) < abs($1.value - sourceRate) }!
            filters.append("fps=fps=\(rate.numerator)/\(rate.denominator)")
        }
        // 8-bit 4:2:0 plays everywhere; HDR does not fit in 8 bits and is brought to SDR first.
        let toneMaps = Self.isHDR(source)
        if toneMaps {
            filters += Self.toneMapFilters
        }
        filters.append("format=pix_fmts=\(String(cString: av_get_pix_fmt_name(codec.pixelFormat)))")
        return Video(
            source: source,
            isCopy: false,
            codec: codec,
            width: coded.width,
            height: coded.height,
            filters: filters,
            maxFrameRate: options[MediaOptions.maxFrameRate],
            keptMatrix: keptMatrix,
            frameRates: self.profile.frameRates?.map(\.rational),
            colour: toneMaps ? .standardDynamicRange(chromaLocation: source.chromaLocation) : nil
        )
    }

    private func planAudio(_ source: SourceStream, options: ConversionOptions) -> Audio {
        let codec =
            self.profile.isVideo
            ? options[MediaOptions.audioCodec] ?? self.profile.audioCodecs[0] : self.profile.audioCodecs.first
        let encoding = AudioEncoding(codec: codec, sourceBits: source.bitsPerSample, pcmCodecs: self.profile.pcmCodecs)
        // The rule's rate and channels, else the one the format takes (an AMV's mono 22050 Hz).
        let sampleRate = options[MediaOptions.sampleRate] ?? self.profile.requiredSampleRate
        // …or, for more channels than the encoder or the container holds (5.1 into WMA's stereo), that most.
        let most = [codec?.maxChannels, self.profile.maxChannels].compactMap { $0 }.min()
        let channels =
            options[MediaOptions.channels] ?? self.profile.requiredChannels
            ?? most.flatMap { source.channels > $0 ? $0 : nil }
        // A video container takes any of its codecs unless the rule names one (one meant to play everywhere only AAC
        // and MP3, unless the rule says `videoCodec: copy`); an audio target has just one.
        let playable = !self.profile.copiesOnlyPlayable || options[MediaOptions.videoCodec] == .copy
        let holdable =
            self.profile.isVideo
            ? options[MediaOptions.audioCodec].map { [$0] }
                ?? self.profile.audioCodecs.filter { playable || Self.playableAudio.contains($0) } : []
        // The bitrate of an encode: the rule's, else the format's default. GSM has one bitrate (13k), which its
        // encoder wants left unset. Only the rule's own `audioBitrate` keeps a stream above it from being copied
        // (``StreamCopy``): the default is what an encode gets, not a reason to re-encode sound the target holds.
        let bitRate =
            encoding.isLossless || codec == .gsm
            ? nil : options[MediaOptions.audioBitrate] ?? self.profile.defaultAudioBitrate
        let canCopy =
            (encoding.copies(source.codecID) || holdable.contains { $0.codecID == source.codecID })
            && StreamCopy.allows(source, options)
            && sampleRate.map { $0 == source.sampleRate } ?? true && channels.map { $0 == source.channels } ?? true
            && self.profile.sampleRates.map { $0.contains(source.sampleRate) } ?? true
        return Audio(
            source: source,
            isCopy: canCopy,
            encoding: encoding,
            bitRate: bitRate,
            sampleRate: sampleRate,
            channels: channels,
            containerRates: self.profile.sampleRates
        )
    }

    private mutating func planSubtitle(_ source: SourceStream, muxer: UnsafePointer<AVOutputFormat>) {
        let target = self.profile.format.name
        switch self.profile.subtitles {
        case .none:
            return
        case .copyOrText where avformat_query_codec(muxer, source.codecID, FF_COMPLIANCE_NORMAL) == 1:
            self.subtitles.append(Subtitle(source: source, encoderName: nil))
            return
        case .text(let encoder), .copyOrText(let encoder):
            guard source.isTextSubtitle, avcodec_find_decoder(source.codecID) != nil else {
                let kind = source.isTextSubtitle ? "subtitles this FFmpeg cannot read" : "picture subtitles"
                self.warnings.append(
                    "subtitle stream #\(source.index) (\(source.codecName)) was dropped: \(target) cannot hold \(kind)"
                )
                return
            }
            let encoderCodec = avcodec_find_encoder_by_name(encoder)?.pointee.id
            self.subtitles.append(Subtitle(source: source, encoderName: encoderCodec == source.codecID ? nil : encoder))
        }
    }

    /// The sound that every player of a target meant to play everywhere plays.
    static let playableAudio: Set<AudioCodec> = [.aac, .mp3]

    /// Whether a video stream plays everywhere as it is: H.264 in 8-bit 4:2:0 (limited or full range), which TVs,
    /// browsers and phones all decode; HEVC, VP9 and AV1 (and H.264 in 10 bits or 4:4:4) many cannot.
    static func playsEverywhere(_ source: SourceStream) -> Bool {
        source.codecID == AV_CODEC_ID_H264 && [AV_PIX_FMT_YUV420P, AV_PIX_FMT_YUVJ420P].contains(source.pixelFormat)
    }

    /// Whether a stream's bitrate is known and within `limit` (and ``bitRateSlack``).
    static func within(_ bitRate: Int, _ limit: Int) -> Bool {
        bitRate > 0 && Double(bitRate) <= Double(limit) * Self.bitRateSlack
    }

    /// Whether a picture of `size` needs no scaling for the box: it fits, and is not to grow.
    static func fits(_ size: (width: Int, height: Int), width: Int?, height: Int?, upscale: Bool) -> Bool {
        let scale = Self.scale(size, width: width, height: height)
        return scale == nil || scale! >= 1 && !(upscale && scale! > 1)
    }

    /// The size that fits `size` into the box (`width` × `height`, either may be missing), keeping the aspect ratio,
    /// in even numbers as 4:2:0 video needs. The side that limits is set exactly (rounded down to even); the other
    /// follows, rounded to the nearest even number, as FFmpeg's `scale=-2:720` does. A picture that already fits
    /// keeps its size (rounded down to even) unless `upscale` lets it grow.
    static func fit(
        _ size: (width: Int, height: Int),
        width maxWidth: Int?,
        height maxHeight: Int?,
        upscale: Bool
    ) -> (width: Int, height: Int) {
        func even(_ value: Int) -> Int { max(2, value - value % 2) }
        guard let scale = Self.scale(size, width: maxWidth, height: maxHeight), scale < 1 || (upscale && scale > 1)
        else {
            return (even(size.width), even(size.height))
        }
        let heightLimits = maxHeight.map { Double($0) / Double(size.height) == scale } ?? false
        if heightLimits, let maxHeight {
            let height = even(maxHeight)
            // av_rescale's rounding: (a * b + c / 2) / c, with c = 2 * height to land on an even width.
            let width = 2 * ((height * size.width + size.height) / (2 * size.height))
            return (min(max(2, width), maxWidth.map(even) ?? Int.max), height)
        }
        let width = even(maxWidth!)
        let height = 2 * ((width * size.height + size.width) / (2 * size.width))
        return (width, min(max(2, height), maxHeight.map(even) ?? Int.max))
    }

    /// The factor that takes `size` to the box's limiting side, or `nil` without a box.
    private static func scale(_ size: (width: Int, height: Int), width: Int?, height: Int?) -> Double? {
        let factors = [
            width.map { Double($0) / Double(max(1, size.width)) },
            height.map { Double($0) / Double(max(1, size.height)) },
        ]
        return factors.compactMap { $0 }.min()
    }
}
