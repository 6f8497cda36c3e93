import CFFmpeg
import ChuteCatalog
import ChuteCore
import SystemPackage

extension MediaEngine {
    /// One clip of a group, as first read: its main streams and what its packets must match to join the others'.
    private struct Clip {
        let file: MediaFile
        let video: SourceStream?
        let audio: SourceStream?
        let frameRate: AVRational
        /// The main video stream's colour description, if it has one.
        let colour: VideoColour?
        /// The codec configuration of the main video and audio streams, byte for byte.
        let signature: [StreamParameters]
        /// Whether the rule's options, on this clip alone, would copy its main streams into the target.
        let copiesAlone: Bool
        /// When it was taken (``InputContainer/captureTime``).
        let captured: CaptureTime?
    }

    /// What a stream's packets need a decoder to be set up with, so that packets of streams with equal parameters
    /// join into one: its codec, picture size and pixel or sample format, sample rate, depth and channels, and its
    /// codec headers byte for byte.
    private struct StreamParameters: Equatable, CustomStringConvertible {
        let codecID: UInt32
        let width: Int32
        let height: Int32
        let format: Int32
        let sampleRate: Int32
        let bits: Int32
        let channels: Int32
        let headers: [UInt8]

        /// - Parameter soundHeaders: whether a sound stream's headers count; a FLAC part's differ by its length and
        ///   checksum, which a decoder of the join does not need.
        init(_ parameters: AVCodecParameters, soundHeaders: Bool = true) {
            self.codecID = parameters.codec_id.rawValue
            self.width = parameters.width
            self.height = parameters.height
            self.format = parameters.format
            self.sampleRate = parameters.sample_rate
            self.bits = parameters.bits_per_raw_sample
            self.channels = parameters.ch_layout.nb_channels
            let counts = soundHeaders || parameters.codec_type == AVMEDIA_TYPE_VIDEO
            self.headers =
                counts
                ? parameters.extradata.map {
                    Array(UnsafeBufferPointer(start: $0, count: Int(parameters.extradata_size)))
                } ?? [] : []
        }

        var description: String {
            let name = String(cString: avcodec_get_name(AVCodecID(rawValue: self.codecID)))
            return self.width > 0
                ? "\(name) \(self.width)x\(self.height)"
                : "\(name) \(self.sampleRate) Hz \(self.bits)-bit \(self.channels) ch"
        }
    }

    /// The keys of the options that shape the picture, applied when the clips are re-encoded to one shape.
    private static let pictureKeys: Set<String> = [
        CommonOptions.width.key, CommonOptions.height.key, CommonOptions.shortSide.key, CommonOptions.longSide.key,
        MediaOptions.upscale.key, MediaOptions.videoCodec.key, MediaOptions.crf.key, MediaOptions.videoBitrate.key,
        MediaOptions.preset.key,
    ]

    /// The containers of the re-encoded clips and of their join: Matroska holds every video codec Chute writes, and
    /// FLAC keeps the sound sample for sample with no encoder delay to leave gaps between the clips.
    private static let clipFormat = TargetFormat(name: "mkv", category: .video, engine: .video, coder: "matroska")
    private static let soundClipFormat = TargetFormat(name: "flac", category: .audio, engine: .audio, coder: "flac")

    /// Joins the clips of a group (`request.inputs`, in order) into one video or one sound file.
    ///
    /// When every clip's main streams have the same codec configuration and the rule would copy them, their packets
    /// are copied one clip after the other into the output, as FFmpeg's concat demuxer does. Otherwise the clips
    /// are made one shape first (``Conformance``: the first clip's picture as shown, fitted into the rule's box, at
    /// its frame rate, or the nearest the target takes, pictures of another shape fitted and centred on black; the
    /// highest sample rate and the most channels among the clips): each
    /// clip's picture is encoded as the rule says and its sound made lossless (FLAC), into a temporary Matroska file
    /// beside the output, read back and checked as a single conversion is. Those are joined into one temporary file,
    /// which is then converted to the target as a single input is: the joined picture copied, the sound encoded once,
    /// so no encoder delay falls between the clips. Every clip must have the kinds of stream the first has (a picture
    /// for a video target; sound in all or none).
    ///
    /// - Returns: the output's size, warnings, and the details `mode` (`joined` or `joined (re-encoded)`),
    ///   `inputFiles`, `clipDurations`, `outputDuration`, the output's codecs and how it was verified.
    /// - Throws: ``ConversionFailure``: `unsupportedInput` for an option a group does not take or clips that cannot
    ///   be joined; a clip's own failure, naming the clip and its place in the group. The output and every
    ///   temporary file are removed.
    func concatenate(
        _ inputs: [FilePath],
        request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        // The rules reader asks the same; a job from an older journal may still carry such an option.
        if let problem = MediaOptions.checkGroup(request.format, request.options) {
            throw ConversionFailure(.unsupportedInput, problem)
        }
        guard request.format.category == .video || request.format.category == .audio else {
            throw ConversionFailure(
                .unsupportedInput,
                "a group of clips becomes one video or one sound file, not \(request.format.name)"
            )
        }
        let profile = TargetProfile(request.format)
        var clips: [Clip] = []
        for (index, input) in inputs.enumerated() {
            do throws(ConversionFailure) {
                let clip = try Self.readClip(input, request: request, profile: profile)
                try Self.check(clip, isVideo: profile.isVideo)
                clips.append(clip)
            } catch {
                throw error.inGroup(input, index: index, count: inputs.count)
            }
        }
        guard let first = clips.first else {
            throw ConversionFailure(.unsupportedInput, "the group has no clip")
        }
        let copies = clips.allSatisfy {
            $0.copiesAlone && $0.signature == first.signature && $0.video?.displayMatrix == first.video?.displayMatrix
        }
        let output = try MediaFile.create(at: request.output)
        var report: ConversionReport
        if copies {
            do {
                report = try self.joinAsTheyAre(clips, request: request, profile: profile, output: output, progress)
            } catch {
                throw error.conversionFailure
            }
        } else {
            report = try self.reencode(
                clips,
                inputs: inputs,
                request: request,
                profile: profile,
                output: output,
                progress
            )
        }
        try output.keep()
        report.outputBytes = output.currentSize ?? 0
        report.details["inputFiles"] = String(inputs.count)
        // A group's `{taken}` is its first clip's.
        report.captured = first.captured
        progress(JobProgress(fraction: 1))
        return report
    }

    /// Copies the clips' packets one clip after the other into the output, and reads it back.
    private func joinAsTheyAre(
        _ clips: [Clip],
        request: ConversionRequest,
        profile: TargetProfile,
        output: MediaFile,
        _ progress: (JobProgress) -> Void
    ) throws(FFmpegError) -> ConversionReport {
        var meter = ProgressMeter(interval: self.progressInterval)
        let (durations, repaired) = try Self.join(
            clips.map(\.file),
            demuxer: nil,
            format: request.format,
            profile: profile,
            options: request.options,
            into: output
        )
        var warnings = FFmpegLog.takeMessages()
        if repaired > 0 {
            warnings.append("\(repaired) packets where the clips meet had their timestamps repaired")
        }
        let verification = try OutputVerifier.verify(
            output,
            demuxer: profile.demuxer,
            expectedDuration: durations.reduce(0, +),
            copiedStreams: Set(0..<Int32(clips[0].signature.count)),
            meter: &meter,
            progress: progress
        )
        // Decoding from a seek point makes decoders warn about what lies before it; the checks judged the output.
        _ = FFmpegLog.takeMessages()
        var report = ConversionReport(outputBytes: 0, warnings: warnings)
        report.details["outputDuration"] = OutputVerifier.seconds(verification.duration)
        report.details["verification"] = verification.description
        report.details["mode"] = "joined"
        report.details["note"] = "every clip's packets were copied without re-encoding"
        report.details["clipDurations"] = durations.map(OutputVerifier.seconds).joined(separator: ", ")
        return report
    }

    /// Makes the clips one shape, joins them, and converts the join to the target (see
    /// ``concatenate(_:request:progress:)``).
    private func reencode(
        _ clips: [Clip],
        inputs: [FilePath],
        request: ConversionRequest,
        profile: TargetProfile,
        output: MediaFile,
        _ progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        var meter = ProgressMeter(interval: self.progressInterval)
        let shape = Self.conformance(of: clips, request: request, profile: profile)
        let clipFormat = profile.isVideo ? Self.clipFormat : Self.soundClipFormat
        // The picture as the rule says (in the target's codec), the sound lossless at the rule's rate and channels.
        var clipOptions = ConversionOptions(request.options.values.filter { Self.pictureKeys.contains($0.key) })
        if profile.isVideo {
            clipOptions[MediaOptions.videoCodec] = .codec(
                request.options[MediaOptions.videoCodec]?.codec ?? profile.videoCodecs[0]
            )
            clipOptions[MediaOptions.audioCodec] = .flac
        }
        clipOptions[MediaOptions.sampleRate] = request.options[MediaOptions.sampleRate]
        clipOptions[MediaOptions.channels] = request.options[MediaOptions.channels]
        var warnings: [String] = []
        var frames: [String] = []
        var encodedVideo: String?
        var parts: [MediaFile] = []
        let hasSound = clips.contains { $0.audio != nil }
        for (index, clip) in clips.enumerated() {
            var one = request
            one.input = inputs[index]
            one.inputs = nil
            one.format = clipFormat
            one.options = clipOptions
            one.output = request.output.appendingToLastComponent("-clip\(index + 1)")
            do throws(ConversionFailure) {
                var part = try MediaFile.create(at: one.output)
                let share = Double(index) / Double(clips.count)
                do {
                    let report = try Self.run(one, input: clip.file, output: part, conformance: shape, meter: &meter) {
                        progress(JobProgress(fraction: 0.6 * (share + $0.fraction / Double(clips.count))))
                    }
                    warnings += report.warnings
                    frames.append(report.details["frames"] ?? "")
                    encodedVideo = encodedVideo ?? report.details["outputVideo"]
                    if hasSound && clip.audio == nil, profile.isVideo {
                        let seconds = Double(report.details["outputDuration"] ?? "") ?? 0
                        part = try Self.addingSilence(
                            to: part,
                            seconds: seconds,
                            shape: shape,
                            request: one,
                            soundFormat: Self.soundClipFormat,
                            meter: &meter
                        )
                        warnings.append(
                            "clip \(index + 1) has no sound: \(OutputVerifier.seconds(seconds)) of silence were added"
                        )
                    }
                } catch {
                    throw error.conversionFailure
                }
                parts.append(part)
            } catch {
                throw error.inGroup(inputs[index], index: index, count: inputs.count)
            }
        }
        let joined = try MediaFile.create(at: request.output.appendingToLastComponent("-joined"))
        // The picture was encoded as the rule says; what is left is the sound, the container and the metadata.
        var last = request
        last.options = ConversionOptions(request.options.values.filter { !Self.pictureKeys.contains($0.key) })
        let durations: [Double]
        var report: ConversionReport
        do {
            (durations, _) = try Self.join(
                parts,
                demuxer: profile.isVideo ? "matroska" : clipFormat.coder,
                format: Self.clipFormat,
                profile: TargetProfile(Self.clipFormat),
                options: [:],
                into: joined
            )
            parts.removeAll()
            report = try Self.run(last, input: joined, output: output, meter: &meter) {
                progress(JobProgress(fraction: 0.6 + 0.4 * $0.fraction))
            }
        } catch {
            throw error.conversionFailure
        }
        report.warnings = warnings + report.warnings
        // The last step's input was the temporary join, its picture encoded in the first step, and its time and speed
        // are only the last step's.
        let lastStepOnly = [
            "inputFormat", "inputVideo", "inputAudio", "inputWidth", "inputHeight", "inputDuration", "elapsedSeconds",
            "speed",
        ]
        for key in lastStepOnly {
            report.details[key] = nil
        }
        report.details["outputVideo"] = encodedVideo
        report.details["mode"] = "joined (re-encoded)"
        report.details["clipDurations"] = durations.map(OutputVerifier.seconds).joined(separator: ", ")
        if profile.isVideo {
            report.details["clipFrames"] = frames.joined(separator: ", ")
        }
        let picture = "\(shape.width)x\(shape.height) at \(shape.frameRate.num)/\(shape.frameRate.den) fps, "
        report.details["clipShape"] = (profile.isVideo ? picture : "") + "sound joined losslessly"
        return report
    }

    /// Opens one clip of a group and reads its main streams.
    private static func readClip(
        _ input: FilePath,
        request: ConversionRequest,
        profile: TargetProfile
    ) throws(ConversionFailure) -> Clip {
        var one = request
        one.input = input
        one.inputs = nil
        let file = try MediaFile.open(reading: one)
        guard file.size > 0 else { throw ConversionFailure(.corruptInput, "empty file") }
        guard let type = MediaType.sniff(file.header(count: 512)),
            type.category == .video || type.category == .audio
        else {
            throw ConversionFailure(.unsupportedInput, "the content is not in a video or audio format Chute recognises")
        }
        do {
            let container = try InputContainer(file: file)
            let sources = (0..<container.streamCount).map { SourceStream(container.stream(at: $0)) }
            try Self.checkLimits(request.limits, sources: sources, declaredDuration: container.declaredDuration)
            let bestVideo = av_find_best_stream(container.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            let bestAudio = av_find_best_stream(container.context, AVMEDIA_TYPE_AUDIO, -1, max(-1, bestVideo), nil, 0)
            let video = profile.isVideo && bestVideo >= 0 ? sources[Int(bestVideo)] : nil
            let audio = bestAudio >= 0 ? sources[Int(bestAudio)] : nil
            let kept = [video, audio].compactMap { $0 }
            let signature = kept.map { StreamParameters(container.stream(at: $0.index).pointee.codecpar.pointee) }
            var frameRate = AVRational(num: 25, den: 1)
            if let video {
                let guessed = av_guess_frame_rate(container.context, container.stream(at: video.index), nil)
                if guessed.num > 0 && guessed.den > 0 { frameRate = guessed }
            }
            let colour = video.map { VideoColour(container.stream(at: $0.index).pointee.codecpar.pointee) }
            let muxer = av_guess_format(request.format.coder, nil, nil)
            let plan = try muxer.map { muxer throws(FFmpegError) in
                try ConversionPlan(
                    sources: sources,
                    inputFormat: container.formatName,
                    bestVideo: video?.index,
                    bestAudio: audio?.index,
                    format: request.format,
                    muxer: muxer,
                    options: request.options
                )
            }
            return Clip(
                file: file,
                video: video,
                audio: audio,
                frameRate: frameRate,
                colour: colour,
                signature: signature,
                copiesAlone: plan.map { ($0.video?.isCopy ?? true) && $0.audio.allSatisfy(\.isCopy) } ?? false,
                captured: container.captureTime
            )
        } catch {
            throw error.conversionFailure
        }
    }

    /// Fails when `clip` has no picture for a video target (the first clip included, which sets the picture's shape).
    /// A clip without sound in a group with sound is given silence
    /// (``addingSilence(to:seconds:shape:request:soundFormat:meter:)``).
    private static func check(_ clip: Clip, isVideo: Bool) throws(ConversionFailure) {
        if isVideo && clip.video == nil {
            throw ConversionFailure(.unsupportedInput, "it has no picture, and a group joined into a video needs one")
        }
    }

    /// The shape the clips are re-encoded to: the first clip's picture and frame rate, and the highest sample rate
    /// and the most channels among the clips' sound (a mono first track does not make a mixtape mono).
    private static func conformance(
        of clips: [Clip],
        request: ConversionRequest,
        profile: TargetProfile
    ) -> Conformance {
        let first = clips[0]
        let source = first.video
        var size = (width: 2, height: 2)
        if let source {
            let display =
                source.displayMatrix?.swapsDimensions == true
                ? (source.height, source.width) : (source.width, source.height)
            let box = PictureBox(request.options).limits(for: display)
            size = ConversionPlan.fit(
                display,
                width: box.width,
                height: box.height,
                upscale: request.options[MediaOptions.upscale] == true
            )
            size = profile.fitting(size)
        }
        return Conformance(
            width: size.width,
            height: size.height,
            frameRate: profile.frameRates.map { rates in
                rates.map(\.rational).min {
                    abs(av_q2d($0) - av_q2d(first.frameRate)) < abs(av_q2d($1) - av_q2d(first.frameRate))
                }!
            } ?? first.frameRate,
            sampleRate: clips.compactMap(\.audio?.sampleRate).max() ?? 48_000,
            channels: clips.compactMap(\.audio?.channels).max() ?? 2,
            soundBits: clips.compactMap(\.audio?.bitsPerSample).max() ?? 16,
            colour: first.colour
        )
    }

    /// Writes the packets of the parts' main streams into `file`, one part after the other, each part's times
    /// shifted to start where the previous part ended (the later of its picture's and its sound's ends).
    ///
    /// - Returns: how long each part lasts in the output, in seconds, and how many packets' timestamps the muxer
    ///   needed repaired (where a part's first packets overlap the previous part's end).
    private static func join(
        _ parts: [MediaFile],
        demuxer: String?,
        format: TargetFormat,
        profile: TargetProfile,
        options: ConversionOptions,
        into file: MediaFile
    ) throws(FFmpegError) -> (durations: [Double], repaired: Int) {
        let muxer = try OutputContainer(file: file, muxer: format.coder, fileExtension: format.name)
        var firstParameters: [StreamParameters] = []
        var durations: [Double] = []
        var start = 0.0
        let packet = try Packet()
        for (index, part) in parts.enumerated() {
            let container = try InputContainer(file: part, demuxer: demuxer)
            let bestVideo =
                profile.isVideo ? av_find_best_stream(container.context, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0) : -1
            let bestAudio = av_find_best_stream(container.context, AVMEDIA_TYPE_AUDIO, -1, max(-1, bestVideo), nil, 0)
            // The part's streams, by their index in the output: the picture first, then the sound.
            let kept = [bestVideo, bestAudio].filter { $0 >= 0 }.map(Int.init)
            if index == 0 {
                for source in kept {
                    let stream = container.stream(at: source)
                    _ = try muxer.addCopy(of: stream, codecTag: nil, matrix: SourceStream(stream).displayMatrix)
                }
                muxer.copyTags(from: container, stream: profile.isVideo ? nil : kept.last)
                muxer.applyMetadataPolicy(CommonOptions.metadataPolicy(in: options))
                try muxer.writeHeader()
            }
            let parameters = kept.map {
                StreamParameters(container.stream(at: $0).pointee.codecpar.pointee, soundHeaders: false)
            }
            if index == 0 {
                firstParameters = parameters
            }
            guard parameters == firstParameters else {
                throw FFmpegError(
                    .unsupportedStream,
                    "concat",
                    detail: "clip \(index + 1)'s streams are not encoded as the first clip's, so they cannot be joined "
                        + "(\(parameters.map(\.description)) against \(firstParameters.map(\.description)))"
                )
            }
            let shift = Int64((start * Double(AV_TIME_BASE)).rounded()) - container.startMicroseconds
            // Matroska leaves out the decoding times of reordered video, which the shift needs.
            var clocks = kept.map { DecodingClock(container.stream(at: $0)) }
            var end = start
            while try container.read(into: packet) {
                defer { packet.unref() }
                let target = packet.pointer
                guard let outputIndex = kept.firstIndex(of: Int(target.pointee.stream_index)) else { continue }
                clocks[outputIndex].fill(target)
                let timeBase = container.stream(at: Int(target.pointee.stream_index)).pointee.time_base
                let offset = av_rescale_q(shift, chute_time_base_q(), timeBase)
                if target.pointee.pts != chute_nopts_value() {
                    target.pointee.pts += offset
                    // A packet without a duration (a last frame, in some files) lasts a frame.
                    let duration =
                        target.pointee.duration > 0 ? target.pointee.duration : clocks[outputIndex].frameTicks
                    end = max(end, Double(target.pointee.pts + duration) * av_q2d(timeBase))
                }
                if target.pointee.dts != chute_nopts_value() { target.pointee.dts += offset }
                target.pointee.stream_index = Int32(outputIndex)
                target.pointee.pos = -1
                av_packet_rescale_ts(target, timeBase, muxer.stream(at: Int32(outputIndex)).pointee.time_base)
                try muxer.write(packet)
            }
            durations.append(end - start)
            start = end
        }
        let repaired = muxer.repairedTimestamps
        try muxer.finish()
        return (durations, repaired)
    }
}
