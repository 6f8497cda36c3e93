import CMagickWand
import ChuteCore
import SystemPackage

/// The image engine: converts still and animated images with ImageMagick 6 through MagickWand.
///
/// A conversion reads the input through one descriptor, decides its type from the content alone, and decodes it
/// with the one ImageMagick coder for that type. It then applies the EXIF orientation, the bounding box, the quality
/// and `strip`, encodes, checks that the encoded bytes read back at the expected size, and only then creates,
/// writes and syncs the output file. Text formats that ImageMagick would interpret (SVG, MVG, PostScript, PDF,
/// playlists) never reach it.
///
/// - Important: ``convert(_:progress:)`` blocks in C code; call it on a worker's own thread. The first conversion,
///   or the first read of ``libraries``, starts ImageMagick for the whole process (see ``MagickLibrary``), and
///   ``threadsPerJob`` is a process-wide setting: a worker process holds one engine and runs one job at a time.
package struct ImageEngine: ConversionEngine {
    /// The OpenMP threads that ImageMagick may use for one conversion.
    package let threadsPerJob: Int

    /// The largest input accepted, in bytes.
    static let inputByteLimit = 1 << 30

    /// The image types Chute decodes, each with the only ImageMagick coder allowed to read it.
    static let decoders: [MediaType: String] = [
        .jpeg: "JPEG", .png: "PNG", .gif: "GIF", .webp: "WEBP", .heif: "HEIC", .avif: "AVIF", .tiff: "TIFF",
        .bmp: "BMP", .jpeg2000: "JP2", .openexr: "EXR", .netpbm: "PNM", .tga: "TGA", .psd: "PSD", .ico: "ICO",
        .radiance: "HDR",
    ]
    /// The input types whose frames are animation frames, drawn onto a shared canvas, rather than pages.
    private static let animatedTypes: Set<MediaType> = [.gif, .webp]

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
    /// `libwebp`, `libheif`, `libtiff`, `OpenJPEG`, `OpenEXR`) as those coders report them.
    package var libraries: [String: String] {
        let library = MagickLibrary.shared
        return library.delegateVersions.merging(["ImageMagick": library.version]) { _, new in new }
    }

    /// Converts `request.input` into `request.output`.
    ///
    /// Options: `width` and `height` bound the output, keeping the aspect ratio and never upscaling; `quality`
    /// (default 0.85) applies to JPEG, WebP and HEIC; `strip` removes EXIF, GPS, XMP and comments but keeps the ICC
    /// profile. The operations (`crop`, `rotate`, `flip`, `flop`, `aspect`, `watermark`) run in the order of
    /// ``ImageOperation/plan(_:format:)``; `maxFileSize` searches the quality and scale that fit (see
    /// ``encode(_:format:within:from:report:)``). Single-frame targets get the first frame (of a HEIF file, ImageMagick reads only the primary image);
    /// GIF, WebP and TIFF keep every frame. JPEG output is flattened onto white when the image has alpha.
    ///
    /// - Parameters:
    ///   - request: the job; `output` must not exist.
    ///   - progress: called with 0.1 (headers checked), 0.5 (decoded), 0.8 (encoded) and 1 (written).
    /// - Returns: the output's size, ImageMagick's warnings, and the details `inputFormat`, `inputWidth`,
    ///   `inputHeight`, `inputFrames`, `outputWidth`, `outputHeight` and `outputFrames`.
    /// - Throws: ``ConversionFailure`` carrying ImageMagick's own message where it gave one; the output file is
    ///   removed (or was never created).
    package func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let library = MagickLibrary.shared
        library.limitThreads(to: self.threadsPerJob)
        var report = ConversionReport(outputBytes: 0)

        let images = try Self.decode(request, library: library, report: &report, progress: progress)
        progress(JobProgress(fraction: 0.5))
        let output = try Self.withMagick(library) { () throws(MagickError) -> MagickBlob in
            try Self.apply(request.options, format: request.format, to: images)
            if let limit = request.options[ImageOptions.maxFileSize] {
                let quality = ImageOperation.quality(request.options)
                return try Self.encode(images, format: request.format, within: limit, from: quality, report: &report)
            }
            let output = try images.encode(coder: request.format.coder, allImages: request.format.holdsSeveralFrames)
            try Self.finish(images, output, format: request.format, report: &report)
            return output
        }
        progress(JobProgress(fraction: 0.8))

        let file = try OutputFile(creatingAt: request.output)
        try output.withUnsafeBytes { (bytes) throws(ConversionFailure) in try file.write(bytes) }
        try file.finish()
        progress(JobProgress(fraction: 1))
        report.outputBytes = Int64(output.count)
        return report
    }

    /// Reads the input, checks its type and size, and decodes the frames that the target needs.
    ///
    /// The headers are read first (`MagickPingImageBlob`), so an image beyond the pixel limits is refused before
    /// any pixel memory is allocated; a coder that cannot ping from memory (EXR) is checked after the full read,
    /// which the policy's own limits still bound. For a single-frame target only the first frame is kept; animation
    /// frames are coalesced onto their canvas so that each can be resized and re-encoded on its own.
    private static func decode(
        _ request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> Wand {
        let bytes = try InputFile(opening: request).readAll(limit: Self.inputByteLimit)
        guard !bytes.isEmpty else { throw ConversionFailure(.corruptInput, "empty file") }
        guard let type = MediaType.sniff(bytes) else {
            throw ConversionFailure(.unsupportedInput, "the content is not in an image format Chute recognises")
        }
        guard let coder = Self.decoders[type] else {
            throw ConversionFailure(.unsupportedInput, "the content is \(type.rawValue), not an image Chute decodes")
        }
        if type == .png, let size = Self.declaredPNGSize(bytes) {
            // libpng refuses a PNG beyond the policy's width or height before ImageMagick's ping can, and ImageMagick
            // then reports no reason at all: the IHDR chunk says it first.
            try Self.checkLimits([size], library: library, limits: request.limits)
        }
        let pingable = library.decodesFromMemory(coder)
        if pingable {
            let headers = Wand()
            try Self.withMagick(library) { () throws(MagickError) in
                try headers.read(bytes, coder: coder, headersOnly: true)
            }
            try Self.checkLimits(Self.frameSizes(of: headers), library: library, limits: request.limits)
        }
        progress(JobProgress(fraction: 0.1))

        var images = Wand()
        try Self.withMagick(library) { () throws(MagickError) in
            try images.read(bytes, coder: coder)
            // Damaged pixel data is only a warning to ImageMagick, which fills in grey; an output that looks
            // complete but is not would be worse than a failed job.
            report.warnings += try images.takeWarnings(.decode, after: "MagickReadImageBlob") {
                $0.isError || $0.isCorruptPixelData
            }
        }
        if !pingable {
            try Self.checkLimits(Self.frameSizes(of: images), library: library, limits: request.limits)
        }
        if type == .heif || type == .avif {
            report.warnings += try Self.withMagick(library) { () throws(MagickError) in
                try Self.restoreHEIFMetadata(from: bytes, to: images)
            }
        }
        report.details["inputFormat"] = images.format
        report.details["inputFrames"] = String(images.imageCount)
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

    /// Puts the HEIF file's ICC profile and EXIF on the decoded primary image (see ``HEIFMetadata``), the EXIF
    /// with the `Exif\0\0` header that JPEG readers look for. The orientation needs no change: libheif has already
    /// applied the file's own rotation and mirroring, and ImageMagick reports the image as top-left, which it writes
    /// into the EXIF of the output.
    ///
    /// - Returns: a warning when the metadata cannot be read or the EXIF item is malformed; the output then has no
    ///   EXIF, rather than the bytes ImageMagick copied.
    private static func restoreHEIFMetadata(
        from bytes: [UInt8],
        to images: borrowing Wand
    ) throws(MagickError) -> [String] {
        try images.selectImage(at: 0)
        let metadata: HEIFMetadata
        do {
            metadata = try HEIFMetadata(reading: bytes)
        } catch {
            images.removeProfile("exif")
            return [
                "the colour profile and EXIF of the HEIF file could not be read, so the output has neither: \(error)"
            ]
        }
        if let profile = metadata.iccProfile {
            try images.setProfile("icc", to: profile)
        }
        guard metadata.exifItem != nil else { return [] }
        guard let exif = metadata.jpegExifProfile else {
            images.removeProfile("exif")
            return [
                "the EXIF item of the HEIF file has no TIFF header where its offset points, so the output has no EXIF"
            ]
        }
        try images.setProfile("exif", to: exif)
        return []
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

    /// Refuses frames wider, taller or larger than the ImageMagick policy allows, larger than the job's `maxPixels`,
    /// or more of them than its `maxFrames`.
    private static func checkLimits(
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
        for (width, height) in sizes {
            if let pixels = limits.pixels, width * height > pixels {
                throw ConversionFailure(
                    .limitExceeded,
                    "image is \(width)x\(height) = \(width * height) pixels; the rule's maxPixels is \(pixels)"
                )
            }
            if width > library.widthLimit || height > library.heightLimit {
                throw ConversionFailure(
                    .limitExceeded,
                    "image is \(width)x\(height) pixels; the width and height limits are \(library.widthLimit) "
                        + "and \(library.heightLimit)"
                )
            }
            if width * height > library.areaLimit {
                throw ConversionFailure(
                    .limitExceeded,
                    "image is \(width)x\(height) = \(width * height) pixels; the limit is \(library.areaLimit) pixels"
                )
            }
        }
    }

    /// Applies the orientation and the options to every frame, in the order of ``ImageOperation/plan(_:format:)``.
    private static func apply(
        _ options: ConversionOptions,
        format: TargetFormat,
        to images: borrowing Wand
    ) throws(MagickError) {
        let steps = ImageOperation.plan(options, format: format)
        try images.forEachImage { () throws(MagickError) in
            for step in steps {
                try step.apply(to: images)
            }
        }
    }

    /// Takes the encoder's warnings, checks that `output` reads back at the images' size (see
    /// ``verify(_:coder:width:height:)``), and records the output's size and frames in the report's details.
    static func finish(
        _ images: borrowing Wand,
        _ output: borrowing MagickBlob,
        format: TargetFormat,
        report: inout ConversionReport
    ) throws(MagickError) {
        report.warnings += try images.takeWarnings(.encode, after: "MagickGetImageBlob") { $0.isError }
        try images.selectImage(at: 0)
        try Self.verify(output, coder: format.coder, width: images.width, height: images.height)
        report.details["outputWidth"] = String(images.width)
        report.details["outputHeight"] = String(images.height)
        report.details["outputFrames"] = String(images.imageCount)
    }

    /// Reads back the headers of the encoded output and compares the first frame's size: with the target's coder,
    /// or for WebP from its header (see ``WebPHeader``: ImageMagick's WebP ping is a full decode).
    private static func verify(
        _ output: borrowing MagickBlob,
        coder: String,
        width: Int,
        height: Int
    ) throws(MagickError) {
        let (readWidth, readHeight, function) = try output.withUnsafeBytes {
            (bytes) throws(MagickError) -> (Int, Int, String) in
            if coder == "WEBP" {
                let header = WebPHeader(bytes)
                return (header?.width ?? 0, header?.height ?? 0, "WebPHeader")
            }
            let headers = Wand()
            try headers.read(bytes, coder: coder, headersOnly: true)
            try headers.selectImage(at: 0)
            return (headers.width, headers.height, "MagickPingImageBlob")
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
    private static func withMagick<Result: ~Copyable>(
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
