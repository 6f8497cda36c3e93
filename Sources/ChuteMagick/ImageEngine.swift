import CMagickWand
import ChuteCatalog
import ChuteCore
import ChuteMetadata
import SystemPackage

/// The image engine: converts still and animated images with ImageMagick 6 through MagickWand.
///
/// A conversion reads the input through one descriptor, decides its type from the content alone, and decodes it
/// with the one ImageMagick coder for that type, or a camera RAW file with LibRaw (see `ImageEngine+Raw.swift`). It
/// then applies the EXIF orientation, the bounding box, the quality and `strip`, encodes, checks that the encoded
/// bytes read back at the expected size, and only then creates, writes and syncs the output file. Text formats that
/// ImageMagick would interpret (SVG, MVG, PostScript, PDF, playlists) never reach it.
///
/// - Important: ``convert(_:progress:)`` blocks in C code; call it on a worker's own thread. The first conversion,
///   or the first read of ``libraries``, starts ImageMagick for the whole process (see ``MagickLibrary``), and
///   ``threadsPerJob`` is a process-wide setting: a worker process holds one engine and runs one job at a time.
package struct ImageEngine: ConversionEngine {
    /// The OpenMP threads that ImageMagick may use for one conversion.
    package let threadsPerJob: Int

    /// The largest input accepted, in bytes.
    static let inputByteLimit = 1 << 30

    /// The input types whose frames are animation frames, drawn onto a shared canvas, rather than pages.
    private static let animatedTypes: Set<MediaType> = [.gif, .webp]
    /// The bits per sample of raw RGB and YUV outputs, which have no header to say it.
    static let rawOutputDepth = 8

    /// Creates the engine.
    ///
    /// - Parameter threadsPerJob: OpenMP threads ImageMagick may use per conversion (the daemon runs one job per
    ///   worker process and several workers, so 1 is the usual value). ImageMagick caps it at the policy's and the
    ///   machine's thread count.
    package init(threadsPerJob: Int = 1) {
        precondition(threadsPerJob >= 1, "threadsPerJob must be at least 1")
        self.threadsPerJob = threadsPerJob
    }

    package var kind: EngineKind { .image }

    /// `ImageMagick` with its release, plus the delegate libraries behind its coders (`libjpeg`, `libpng`,
    /// `libwebp`, `libheif`, `libtiff`, `OpenJPEG`, `OpenEXR`) as those coders report them, and `LibRaw`, which
    /// decodes camera RAW files.
    package var libraries: [String: String] {
        let library = MagickLibrary.shared
        return library.delegateVersions.merging(["ImageMagick": library.version, "LibRaw": RawProcessor.version]) {
            _,
            new in new
        }
    }

    /// Converts `request.input` into `request.output`.
    ///
    /// Options: `width` and `height` bound the output, keeping the aspect ratio and never upscaling; `quality`
    /// (default 0.85) applies to the lossy targets; `metadata` (or `strip`) removes metadata but keeps the ICC profile
    /// (see ``convert(_:metadata:progress:)``). The operations (`crop`, `rotate`, `flip`, `flop`, `aspect`,
    /// `watermark`) run in the order of ``ImageOperation/plan(_:format:metadata:orientation:)``; `maxFileSize` searches
    /// the quality and scale that fit (see ``encode(_:format:within:from:report:)``). Single-frame targets get the
    /// first frame (of a HEIF file, ImageMagick reads only the primary image); GIF, WebP and TIFF keep every frame.
    /// Targets without alpha are flattened onto white. `tiles` writes the finished picture as tiles instead, each a
    /// part beside `request.output` (see ``writeTiles(of:grid:request:report:progress:)``).
    ///
    /// - Parameters:
    ///   - request: the job; `output` must not exist.
    ///   - progress: called with 0.1 (headers checked), 0.5 (decoded), 0.8 (encoded) and 1 (written).
    /// - Returns: the output's size, ImageMagick's warnings, and the details `inputFormat`, `inputWidth`,
    ///   `inputHeight`, `inputFrames`, `outputWidth`, `outputHeight` and `outputFrames` (and `inputColorspace`
    ///   `CMYK` for a picture in print colours).
    /// - Throws: ``ConversionFailure`` carrying ImageMagick's own message where it gave one; the output file is
    ///   removed (or was never created).
    package func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        if let inputs = request.inputs {
            if let grid = request.options[ImageOptions.tiles].flatMap(TileGrid.init) {
                return try self.contactSheet(inputs, grid: grid, request: request, progress: progress)
            }
            return try self.animate(inputs, request: request, progress: progress)
        }
        return try self.convert(request, metadata: Self.metadataPolicy(of: request.options), progress: progress)
    }

    /// Converts `request.input` into `request.output`, treating metadata as `policy` says.
    ///
    /// `strip` removes EXIF (with its thumbnail), GPS, XMP, IPTC, maker segments, comments and PNG text, keeping the
    /// ICC profile; `location` removes only the EXIF GPS directory, XMP that holds location, and the IPTC location
    /// fields. When the input and the target are the same JPEG, PNG or WebP and nothing else changes the pixels
    /// (no `width`, `height` or `quality`), the metadata is cut out of the file and the image data is written byte
    /// for byte (see ``MetadataRemoval``); under `strip` a JPEG with an EXIF orientation is first rotated in the DCT
    /// domain, losslessly, and anything that cannot be done that way is re-encoded instead. The details then say
    /// `metadataRemoved` (the kinds, never the values) and `pixels` (`unchanged`, `rotated losslessly
    /// (orientation N)` or `reencoded (reason)`).
    ///
    /// - Parameters:
    ///   - request: the job; `output` must not exist.
    ///   - policy: what to do with the metadata.
    ///   - progress: as for ``convert(_:progress:)``.
    /// - Returns: as for ``convert(_:progress:)``, with `metadataRemoved` and `pixels` when metadata was removed.
    /// - Throws: as ``convert(_:progress:)``; a JPEG, PNG or WebP whose structure is malformed is `corruptInput`.
    package func convert(
        _ request: ConversionRequest,
        metadata policy: MetadataPolicy,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let library = MagickLibrary.shared
        library.limitThreads(to: self.threadsPerJob)
        var report = ConversionReport(outputBytes: 0)

        let bytes = try InputFile(opening: request).readAll(limit: Self.inputByteLimit)
        guard !bytes.isEmpty else { throw ConversionFailure(.corruptInput, "empty file") }
        let layout: RawPixelLayout?
        do {
            layout = try ImageOptions.rawLayout(in: request.options)
        } catch {
            throw ConversionFailure(.unsupportedInput, error.description)
        }
        var type: MediaType?
        var coder: String?
        if layout == nil {
            let (sniffed, reader) = try Self.inspect(bytes, request: request, library: library, report: &report)
            (type, coder) = (sniffed, reader)
            report.captured = Self.captureTime(of: bytes, type: sniffed)
            if reader != nil {
                // A camera RAW's size is known only once LibRaw opens it: ``decodeRaw`` reports its own headers.
                progress(JobProgress(fraction: 0.1))
            }
            if let container = Self.losslessContainer(
                type: sniffed,
                request: request,
                policy: policy,
                cmyk: report.details["inputColorspace"] == "CMYK"
            ),
                let output = try Self.removeMetadataLosslessly(
                    from: bytes,
                    container: container,
                    policy: policy,
                    library: library,
                    report: &report
                )
            {
                progress(JobProgress(fraction: 0.8))
                try TemporaryFile.writeOutput(output, at: request.output)
                progress(JobProgress(fraction: 1))
                report.outputBytes = Int64(output.count)
                return report
            }
        }
        let images = try Self.decode(
            bytes,
            layout: layout,
            type: type,
            coder: coder,
            request,
            library: library,
            report: &report,
            progress: progress
        )
        progress(JobProgress(fraction: 0.5))
        let orientation = policy == .strip ? type.flatMap { Self.exifOrientation(of: bytes, type: $0) } : nil
        try Self.withMagick(library) { () throws(MagickError) in
            var removed = try Self.apply(
                request.options,
                metadata: policy,
                orientation: orientation,
                format: request.format,
                to: images
            )
            // ImageMagick and libheif read only the still: a motion photo's video is lost whatever the policy, so it
            // is listed.
            if type == .jpeg, MotionPhoto.trailer(in: bytes)?.holdsVideo == true {
                removed.insert(.motionPhotoVideo)
            }
            if type == .heif || type == .avif, MotionPhoto.holdsVideo(inHEIF: bytes) {
                removed.insert(.motionPhotoVideo)
            }
            if policy != .keep || !removed.isEmpty {
                report.details["metadataRemoved"] = MetadataRemoval.list(removed)
            }
            try images.selectImage(at: 0)
        }
        if let grid = request.options[ImageOptions.tiles].flatMap(TileGrid.init) {
            return try Self.writeTiles(of: images, grid: grid, request: request, report: report, progress: progress)
        }
        let output = try Self.encode(images, request: request, library: library, report: &report)
        progress(JobProgress(fraction: 0.8))

        try output.withUnsafeBytes { (bytes) throws(ConversionFailure) in
            try TemporaryFile.writeOutput(bytes, at: request.output)
        }
        progress(JobProgress(fraction: 1))
        report.outputBytes = Int64(output.count)
        return report
    }

    /// Encodes the wand's images for the target and checks that the encoded bytes read back at the size of the first,
    /// recording the output's size and frames in the report's details.
    ///
    /// - Throws: ``ConversionFailure`` with ImageMagick's message; `unsupportedInput` for YUV of an odd size.
    static func encode(
        _ images: borrowing Wand,
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> MagickBlob {
        if request.format.coder == RawPixelLayout.Samples.yuv.coder {
            do {
                try RawPixelLayout.checkEven(width: images.width, height: images.height)
            } catch {
                throw ConversionFailure(.unsupportedInput, "cannot write YUV: \(error)")
            }
        }
        return try Self.withMagick(library) { () throws(MagickError) -> MagickBlob in
            if let limit = request.options[CommonOptions.maxFileSize] {
                let quality = ImageOperation.quality(request.options)
                return try Self.encode(
                    images,
                    format: request.format,
                    within: limit,
                    from: quality,
                    library: library,
                    report: &report
                )
            }
            let output =
                request.format.coder == RawPixelLayout.Samples.yuv.coder
                ? try images.encodeThroughStream(coder: request.format.coder)
                : try images.encode(coder: request.format.coder, allImages: request.format.holdsSeveralFrames)
            try Self.finish(images, output, format: request.format, library: library, report: &report)
            return output
        }
    }

    /// Checks the input's type and, from its headers, its size, before any pixel is decoded.
    ///
    /// The headers are read with `MagickPingImageBlob` (a HEIF or AVIF file's boxes with libheif), so an image beyond
    /// the pixel limits is refused before any pixel memory is allocated; a coder that cannot ping from memory (EXR) is
    /// checked by ``decode`` after the full read, which the policy's own limits still bound.
    ///
    /// - Returns: the type and the one ImageMagick coder allowed to read it, or no coder for a camera RAW, which
    ///   LibRaw reads; `inputWidth`, `inputHeight` and `inputFrames` (and `inputColorspace` `CMYK`) go into the
    ///   report's details when the headers were read.
    static func inspect(
        _ bytes: [UInt8],
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> (MediaType, String?) {
        // The job's limits hold from the first read: ImageMagick's are process-wide, left by the worker's last job.
        _ = library.apply(request.limits)
        guard let type = MediaType.sniff(bytes) else {
            throw ConversionFailure(
                .unsupportedInput,
                "the content is not in an image format Chute recognises (raw RGB or YUV pixels have no header: "
                    + "only a rule that declares their size and depth can read them)"
            )
        }
        try Self.refuseCutShort(bytes, type: type)
        if Self.rawTypes.contains(type) {
            return (type, nil)
        }
        guard let coder = ImageOptions.decoders[type] else {
            throw ConversionFailure(.unsupportedInput, "the content is \(type.rawValue), not an image Chute decodes")
        }
        if type == .png, let size = Self.declaredPNGSize(bytes) {
            // libpng refuses a PNG beyond the policy's width or height before ImageMagick's ping can, and ImageMagick
            // then reports no reason at all: the IHDR chunk says it first.
            try Self.checkLimits([size], library: library, limits: request.limits)
        }
        if Self.heifTypes.contains(type) {
            let size = try Self.heifSize(of: bytes)
            try Self.checkLimits([size], library: library, limits: request.limits)
        } else if library.decodesFromMemory(coder) {
            let headers = Wand()
            try Self.withMagick(library) { () throws(MagickError) in
                try headers.read(bytes, coder: coder, headersOnly: true)
            }
            let sizes = Self.frameSizes(of: headers)
            try Self.checkLimits(sizes, library: library, limits: request.limits)
            report.details["inputFormat"] = headers.format
            report.details["inputFrames"] = String(sizes.count)
            report.details["inputWidth"] = sizes.first.map { String($0.width) }
            report.details["inputHeight"] = sizes.first.map { String($0.height) }
            if headers.isCMYK { report.details["inputColorspace"] = "CMYK" }
        }
        return (type, coder)
    }

    /// Decodes the input: raw pixels in the rule's layout, a camera RAW through LibRaw (a type without a coder), or
    /// anything else through its one ImageMagick coder.
    static func decode(
        _ bytes: [UInt8],
        layout: RawPixelLayout?,
        type: MediaType?,
        coder: String?,
        _ request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> Wand {
        _ = library.apply(request.limits)
        if let layout {
            return try Self.decodeRaw(bytes, layout: layout, request: request, library: library, report: &report)
        }
        guard let type else { throw ConversionFailure(.internalError, "no type for a sniffed input") }
        guard let coder else {
            return try Self.decodeRaw(
                bytes,
                type: type,
                request: request,
                library: library,
                report: &report,
                progress: progress
            )
        }
        return try Self.decode(bytes, type: type, coder: coder, request, library: library, report: &report)
    }

    /// Decodes the frames that the target needs from the input that ``inspect`` accepted.
    ///
    /// For a single-frame target only the first frame is kept; animation frames are coalesced onto their canvas so
    /// that each can be resized and re-encoded on its own.
    private static func decode(
        _ bytes: [UInt8],
        type: MediaType,
        coder: String,
        _ request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> Wand {
        if Self.heifTypes.contains(type) {
            return try Self.decodeHEIF(bytes, coder: coder, request, library: library, report: &report)
        }
        let pingable = library.decodesFromMemory(coder)
        var images = Wand()
        try Self.withMagick(library) { () throws(MagickError) in
            try images.read(bytes, coder: coder)
            // Damaged pixel data is only a warning to ImageMagick, which fills in grey; an output that looks
            // complete but is not would be worse than a failed job.
            report.warnings += try images.takeWarnings(.decode, after: "MagickReadImageBlob", coder: coder) {
                $0.isError || $0.isCorruptPixelData
            }
        }
        if !pingable {
            try Self.checkLimits(Self.frameSizes(of: images), library: library, limits: request.limits)
        }
        if type == .tga {
            // ImageMagick's TGA coder reports the file's bottom-left origin as the image's orientation after it has
            // already flipped the rows: applying it again would turn the picture upside down.
            try Self.withMagick(library) { () throws(MagickError) in
                try images.forEachImage { () throws(MagickError) in try images.markTopLeft() }
            }
        }
        report.details["inputFormat"] = images.format
        let frames = images.imageCount
        report.details["inputFrames"] = String(frames)
        if frames > 1 {
            report.details["frames"] = request.format.holdsSeveralFrames ? "all \(frames)" : "first of \(frames)"
        }
        try Self.withMagick(library) { () throws(MagickError) in
            if !request.format.holdsSeveralFrames {
                try images.keepFirstImage()
            }
            if Self.animatedTypes.contains(type) {
                images = try images.coalesced()
            }
            try images.selectImage(at: 0)
        }
        report.details["inputWidth"] = String(images.width)
        report.details["inputHeight"] = String(images.height)
        return images
    }

    /// Decodes a headerless raw RGB or YUV input in the layout its rule declared.
    ///
    /// The size must match the layout exactly: raw samples carry nothing else that could show a wrong size or
    /// depth, and a file that is one row short or twice too long is more likely a wrong declaration than an image.
    /// The declared size is checked against the limits before any pixel is decoded.
    private static func decodeRaw(
        _ bytes: [UInt8],
        layout: RawPixelLayout,
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> Wand {
        guard bytes.count == layout.byteCount else {
            throw ConversionFailure(
                .corruptInput,
                "the input has \(bytes.count) bytes, and \(layout) takes \(layout.byteCount): check the rule's "
                    + "raw size and depth"
            )
        }
        try Self.checkLimits([(layout.width, layout.height)], library: library, limits: request.limits)
        let images = Wand()
        try Self.withMagick(library) { () throws(MagickError) in
            try images.setRawGeometry(width: layout.width, height: layout.height, depth: layout.depth)
            try images.read(bytes, coder: layout.samples.coder)
            report.warnings += try images.takeWarnings(
                .decode,
                after: "MagickReadImageBlob",
                coder: layout.samples.coder
            ) {
                $0.isError || $0.isCorruptPixelData
            }
            try images.selectImage(at: 0)
        }
        report.details["inputFormat"] = images.format
        report.details["inputFrames"] = String(images.imageCount)
        report.details["inputWidth"] = String(images.width)
        report.details["inputHeight"] = String(images.height)
        return images
    }

    /// The width and height in a PNG's IHDR chunk, which the format requires first, right after the signature; `nil`
    /// when the bytes do not start that way (the coder then says what is wrong).
    private static func declaredPNGSize(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
        guard bytes.count >= 24, bytes[12..<16].elementsEqual("IHDR".utf8) else { return nil }
        func bigEndian(at offset: Int) -> Int {
            bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
        }
        return (bigEndian(at: 16), bigEndian(at: 20))
    }

    /// Each image's size, in list order.
    private static func frameSizes(of images: borrowing Wand) -> [(width: Int, height: Int)] {
        var sizes: [(width: Int, height: Int)] = []
        images.forEachImage { sizes.append((images.width, images.height)) }
        return sizes
    }

    /// Sets the job's image limits in ImageMagick (``MagickLibrary/apply(_:)``) and refuses more frames than its
    /// `maxFrames`, or frames wider or taller than its `maxImageSide` or larger than its `maxPixels`; each refusal
    /// names the key that raises it.
    static func checkLimits(
        _ sizes: [(width: Int, height: Int)],
        library: MagickLibrary,
        limits: JobLimits
    ) throws(ConversionFailure) {
        if let frames = limits.frames, sizes.count > frames {
            throw ConversionFailure(
                .limitExceeded,
                "image has \(sizes.count) frames; the rule's maxFrames is \(frames)"
            )
        }
        let held = library.apply(limits)
        // Said when ImageMagick holds a lower limit than the job asks for: a policy Chute could not override.
        let capped = held.capped ? " (capped by ImageMagick's policy, /etc/ImageMagick-6/policy.xml)" : ""
        for (width, height) in sizes {
            if width > held.side || height > held.side {
                throw ConversionFailure(
                    .limitExceeded,
                    "image is \(width)x\(height) pixels; maxImageSide is \(held.side)\(capped): raise it in the "
                        + "rule or in settings"
                )
            }
            if width * height > held.pixels {
                throw ConversionFailure(
                    .limitExceeded,
                    "image is \(width)x\(height) = \(width * height) pixels; maxPixels is \(held.pixels)\(capped): "
                        + "raise it in the rule or in settings"
                )
            }
        }
    }

    /// Applies the orientation, the options and the metadata policy to every frame, in the order of
    /// ``ImageOperation/plan(_:format:metadata:orientation:)``.
    ///
    /// - Parameter orientation: an EXIF orientation that ImageMagick does not read itself (see
    ///   ``exifOrientation(of:type:)``), applied before the metadata that holds it is stripped.
    /// - Returns: the kinds of metadata removed.
    private static func apply(
        _ options: ConversionOptions,
        metadata policy: MetadataPolicy,
        orientation: Int?,
        format: TargetFormat,
        to images: borrowing Wand
    ) throws(MagickError) -> Set<MetadataKind> {
        let steps = ImageOperation.plan(options, format: format, metadata: policy, orientation: orientation)
        var removed: Set<MetadataKind> = []
        try images.forEachImage { () throws(MagickError) in
            for step in steps {
                removed.formUnion(try step.apply(to: images))
            }
        }
        return removed
    }

    /// Takes the encoder's warnings, checks that `output` reads back at the images' size (see
    /// ``verify(_:coder:library:width:height:)``), and records the output's size and frames in the report's details.
    static func finish(
        _ images: borrowing Wand,
        _ output: borrowing MagickBlob,
        format: TargetFormat,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(MagickError) {
        report.warnings += try images.takeWarnings(.encode, after: "MagickGetImageBlob") { $0.isError }
        try images.selectImage(at: 0)
        try Self.verify(output, coder: format.coder, library: library, width: images.width, height: images.height)
        report.details["outputWidth"] = String(images.width)
        report.details["outputHeight"] = String(images.height)
        report.details["outputFrames"] = String(images.imageCount)
    }

    /// Reads back the headers of the encoded output and compares the first frame's size: with the target's coder,
    /// or for WebP from its header (see ``WebPHeader``: ImageMagick's WebP ping is a full decode). A coder that
    /// cannot decode from memory (EXR) cannot ping either, so its output is read in full. Raw RGB and YUV have no
    /// header to read back: their size must be what the width, the height and ``rawOutputDepth`` make.
    private static func verify(
        _ output: borrowing MagickBlob,
        coder: String,
        library: MagickLibrary,
        width: Int,
        height: Int
    ) throws(MagickError) {
        if let samples = RawPixelLayout.Samples.allCases.first(where: { $0.coder == coder }) {
            let expected = RawPixelLayout.byteCount(
                samples: samples,
                width: width,
                height: height,
                depth: Self.rawOutputDepth
            )
            guard output.count == expected else {
                throw MagickError(
                    code: .verify,
                    function: "MagickGetImageBlob",
                    severity: 0,
                    message: "the \(coder) output has \(output.count) bytes, not the \(expected) of \(width)x\(height) "
                        + "pixels at \(Self.rawOutputDepth) bits"
                )
            }
            return
        }
        let headersOnly = library.decodesFromMemory(coder)
        let (readWidth, readHeight, function) = try output.withUnsafeBytes {
            (bytes) throws(MagickError) -> (Int, Int, String) in
            if coder == "WEBP" {
                let header = WebPHeader(bytes)
                return (header?.width ?? 0, header?.height ?? 0, "WebPHeader")
            }
            let headers = Wand()
            try headers.read(bytes, coder: coder, headersOnly: headersOnly)
            try headers.selectImage(at: 0)
            return (headers.width, headers.height, headersOnly ? "MagickPingImageBlob" : "MagickReadImageBlob")
        }
        guard readWidth == width, readHeight == height else {
            throw MagickError(
                code: .verify,
                function: function,
                severity: 0,
                message: "the \(coder) output reads back as \(readWidth)x\(readHeight), not \(width)x\(height)"
            )
        }
    }

    /// Runs MagickWand work, turning its error into the failure a worker reports.
    static func withMagick<Result: ~Copyable>(
        _ library: MagickLibrary,
        _ body: () throws(MagickError) -> Result
    ) throws(ConversionFailure) -> Result {
        do {
            return try body()
        } catch {
            throw error.conversionFailure(limits: library)
        }
    }
}
