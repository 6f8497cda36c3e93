import ChuteCatalog
import ChuteCore
import SystemPackage

extension ImageEngine {
    /// Reads one image of a group as a single input is read (its types, limits and warnings), keeping its first
    /// frame, turned upright, in sRGB; the group's first image gives the report its capture time.
    static func groupImage(
        _ input: FilePath,
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> Wand {
        var one = request
        one.input = input
        one.inputs = nil
        let bytes = try InputFile(opening: one).readAll(limit: Self.inputByteLimit)
        guard !bytes.isEmpty else { throw ConversionFailure(.corruptInput, "empty file") }
        var decoded = ConversionReport(outputBytes: 0)
        let (type, coder) = try Self.inspect(bytes, request: one, library: library, report: &decoded)
        if input == request.inputs?.first {
            // A group's `{taken}` is its first file's.
            report.captured = Self.captureTime(of: bytes, type: type)
        }
        let frame = try Self.decode(
            bytes,
            layout: nil,
            type: type,
            coder: coder,
            one,
            library: library,
            report: &decoded,
            progress: { _ in }
        )
        report.warnings += decoded.warnings
        try Self.withMagick(library) { () throws(MagickError) in
            try frame.keepFirstImage()
            try frame.autoOrient()
            // Pictures are laid on one canvas, whose pixels are sRGB: a CMYK JPEG or TIFF would otherwise go onto it
            // as CMYK values.
            try frame.makeSRGB()
        }
        return frame
    }

    /// Makes the images of a group (`request.inputs`, in order) one looping GIF or WebP animation, one frame each,
    /// shown for the rule's `frameDelay`.
    ///
    /// Each image is read through its own descriptor and decoded as a single input is (its first frame, turned
    /// upright). The frames are the first image's size, bounded by `width` and `height`; every other image is fitted
    /// into that size (enlarged or reduced, keeping its aspect ratio) and centred on `background` (transparent by
    /// default). `quality` applies to WebP; `maxFileSize` as for any image.
    ///
    /// - Returns: the output's size, the decoders' warnings, and the details `inputFiles`, `frameDelay`,
    ///   `outputWidth`, `outputHeight` and `outputFrames`.
    /// - Throws: ``ConversionFailure``: `unsupportedInput` for a target other than GIF or WebP, `limitExceeded` for
    ///   more images than an animation may hold; a file's own failure, naming the file and its place in the group.
    func animate(
        _ inputs: [FilePath],
        request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        guard ImageOptions.animatedFormats.contains(request.format.name) else {
            throw ConversionFailure(
                .unsupportedInput,
                "a group of images becomes an animated GIF or WebP, not \(request.format.name)"
            )
        }
        let limit = min(MagickLibrary.frameLimit, request.limits.frames ?? .max)
        guard inputs.count <= limit else {
            throw ConversionFailure(
                .limitExceeded,
                "the group has \(inputs.count) images, more than the \(limit) frames an animation may have"
            )
        }
        let library = MagickLibrary.shared
        library.limitThreads(to: self.threadsPerJob)
        let options = request.options
        let ticks =
            options[ImageOptions.frameDelay].flatMap(ValueParsing.duration).map {
                max(1, Int(($0 / .milliseconds(10)).rounded()))
            } ?? ImageOptions.defaultFrameDelay
        let background = options[ImageOptions.background].flatMap(ImageColor.init) ?? .transparent
        var report = ConversionReport(outputBytes: 0)
        let animation = Wand()
        var canvas: (width: Int, height: Int)?
        for (index, input) in inputs.enumerated() {
            do throws(ConversionFailure) {
                let frame = try Self.groupImage(input, request: request, library: library, report: &report)
                try Self.withMagick(library) { () throws(MagickError) in
                    let size =
                        canvas
                        ?? ImageOperation.fittedSize(
                            width: frame.width,
                            height: frame.height,
                            box: PictureBox(options).limits(for: (frame.width, frame.height))
                        ) ?? (frame.width, frame.height)
                    canvas = size
                    try frame.fit(into: size, background: background)
                    try frame.makeFrame(ticks: ticks)
                    if ImageOperation.lossyTargets.contains(request.format.name) {
                        try frame.setQuality(ImageOperation.quality(options))
                    }
                    try animation.append(frame)
                }
            } catch {
                throw error.inGroup(input, index: index, count: inputs.count)
            }
            progress(JobProgress(fraction: 0.8 * Double(index + 1) / Double(inputs.count)))
        }
        try Self.withMagick(library) { () throws(MagickError) in try animation.selectImage(at: 0) }
        try Self.write(animation, of: inputs, request: request, library: library, report: &report)
        progress(JobProgress(fraction: 1))
        report.details["frameDelay"] = "\(ticks * 10)ms"
        return report
    }

    /// Encodes the picture made of a group, writes it to `request.output`, and records its size and the group's.
    static func write(
        _ picture: borrowing Wand,
        of inputs: [FilePath],
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) {
        let output = try Self.encode(picture, request: request, library: library, report: &report)
        try output.withUnsafeBytes { (bytes) throws(ConversionFailure) in
            try TemporaryFile.writeOutput(bytes, at: request.output)
        }
        report.outputBytes = Int64(output.count)
        report.details["inputFiles"] = String(inputs.count)
    }
}
