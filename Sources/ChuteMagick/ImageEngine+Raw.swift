import ChuteCore

extension ImageEngine {
    /// The camera RAW types, which LibRaw decodes (``RawProcessor``) rather than an ImageMagick coder: ImageMagick 6
    /// would hand them to a delegate program (`dcraw`, `ufraw`), and reads the JPEG preview of some as the image.
    static let rawTypes: Set<MediaType> = [.dng, .cr2, .cr3, .nef, .arw, .raf, .orf, .rw2]
    /// The camera RAW types that are TIFF inside, whose EXIF ``RawEXIF`` carries into the output.
    static let tiffStructuredRawTypes: Set<MediaType> = [.dng, .cr2, .nef, .arw, .orf, .rw2]

    /// Decodes a camera RAW file with LibRaw into a wand holding one upright 16-bit sRGB image.
    ///
    /// The headers are read first, so that a sensor or image beyond the pixel limits is refused before LibRaw
    /// allocates anything for it; LibRaw's own allocation ceiling follows the job's `memoryLimit`. A file that holds
    /// no raw image (a stripped file that keeps only its metadata and embedded JPEG preview) is refused: the preview
    /// is a small, camera-processed JPEG, and an output made from it would pass for a developed RAW. The file's EXIF
    /// becomes the image's `exif` profile (``RawEXIF``) where the file is TIFF inside; otherwise a warning says the
    /// output has none.
    ///
    /// - Throws: ``ConversionFailure`` carrying LibRaw's message: `unsupportedInput` for a file LibRaw does not
    ///   recognise or that holds no raw image, `corruptInput` for damaged or cut-short data, `limitExceeded` for the
    ///   pixel and memory limits.
    static func decodeRaw(
        _ bytes: [UInt8],
        type: MediaType,
        request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> Wand {
        let images = Wand()
        // Array.withUnsafeBytes only rethrows untyped errors, so the typed error travels out in a Result.
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(ConversionFailure) in
                let processor = try Self.withLibRaw { () throws(LibRawError) in
                    try RawProcessor(opening: buffer, memoryLimit: request.limits.memory)
                }
                try Self.checkLimits([processor.size, processor.rawSize], library: library, limits: request.limits)
                progress(JobProgress(fraction: 0.1))
                let developed = try Self.withLibRaw { () throws(LibRawError) in try processor.develop() }
                try Self.withMagick(library) { () throws(MagickError) in
                    try developed.withUnsafePixels { (pixels) throws(MagickError) in
                        try images.constitute(
                            width: developed.width,
                            height: developed.height,
                            channels: developed.channels == 1 ? "I" : "RGB",
                            bitsPerChannel: developed.bitsPerChannel,
                            pixels: pixels
                        )
                    }
                    try images.selectImage(at: 0)
                }
            }
        }.get()
        report.details["inputFormat"] = type.rawValue.uppercased()
        report.details["inputFrames"] = "1"
        report.details["inputWidth"] = String(images.width)
        report.details["inputHeight"] = String(images.height)
        if let exif = Self.tiffStructuredRawTypes.contains(type) ? RawEXIF(reading: bytes) : nil {
            try Self.withMagick(library) { () throws(MagickError) in try images.setProfile("exif", to: exif.profile) }
        } else {
            report.warnings.append(
                "the output has no EXIF (camera, capture time, exposure) from the camera RAW file: Chute carries it "
                    + "over only from RAW files that are TIFF inside (DNG, CR2, NEF, ARW, ORF, RW2) and hold it"
            )
        }
        return images
    }

    /// Runs LibRaw work, turning its error into the failure a worker reports.
    private static func withLibRaw<Result: ~Copyable>(
        _ body: () throws(LibRawError) -> Result
    ) throws(ConversionFailure) -> Result {
        do {
            return try body()
        } catch {
            throw error.conversionFailure
        }
    }
}
