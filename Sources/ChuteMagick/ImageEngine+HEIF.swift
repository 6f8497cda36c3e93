import CHeif
import ChuteCore

extension ImageEngine {
    /// The types whose files libheif reads directly rather than through ImageMagick's HEIC coder: that coder lets
    /// libheif decode a phone's grid of tiles on 4 threads whatever the job was given, converts the colours itself
    /// with the chroma of each pixel pair repeated, reads no colour profile and mangles the EXIF.
    static let heifTypes: Set<MediaType> = [.heif, .avif]

    /// The primary image's width and height from a HEIF or AVIF file's boxes, before any pixel is decoded.
    ///
    /// - Throws: ``ConversionFailure`` when libheif cannot read the file.
    static func heifSize(of bytes: [UInt8]) throws(ConversionFailure) -> (width: Int, height: Int) {
        try bytes.withUnsafeBytes { buffer in
            Result { () throws(ConversionFailure) in
                try Self.withLibheif { () throws(HeifError) in try HeifContext(reading: buffer).primaryImage().size }
            }
        }.get()
    }

    /// The EXIF of a HEIF or AVIF file's primary image as a JPEG holds it (``HEIFMetadata/jpegExifProfile``), read
    /// from its boxes without decoding a pixel; `nil` when it has none or libheif cannot read it.
    static func heifEXIF(of bytes: [UInt8]) -> [UInt8]? {
        bytes.withUnsafeBytes { buffer in
            do throws(HeifError) {
                let context = try HeifContext(reading: buffer)
                return try HEIFMetadata(of: context.primaryImage()).jpegExifProfile
            } catch {
                return nil
            }
        }
    }

    /// Runs libheif calls, their error turned into the job's (``HeifError/conversionFailure``).
    private static func withLibheif<Value: ~Copyable>(
        _ body: () throws(HeifError) -> Value
    ) throws(ConversionFailure) -> Value {
        do {
            return try body()
        } catch {
            throw error.conversionFailure
        }
    }

    /// Decodes a HEIF or AVIF file's primary image with libheif, its tiles on the job's threads (libheif's own
    /// choice without a thread count), and puts its ICC profile and EXIF on it (see ``HEIFMetadata``), the EXIF with
    /// the `Exif\0\0` header that JPEG readers look for. libheif applies the file's own rotation, mirroring and crop,
    /// so the image is marked top-left, which ImageMagick writes into the EXIF of the output.
    ///
    /// - Parameter bytes: a file that ``inspect`` accepted, which checked its size against the limits.
    /// - Throws: ``ConversionFailure``: `corruptInput` with libheif's message for a damaged file.
    static func decodeHEIF(
        _ bytes: [UInt8],
        coder: String,
        _ request: ConversionRequest,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> Wand {
        let images = Wand()
        let decoded = bytes.withUnsafeBytes { buffer in
            Result { () throws(ConversionFailure) -> [String] in
                let context = try Self.withLibheif { () throws(HeifError) in try HeifContext(reading: buffer) }
                let image = try Self.withLibheif { () throws(HeifError) in try context.primaryImage() }
                if let threads = request.threads {
                    context.limitDecodingThreads(to: threads)
                }
                let pixels = try Self.withLibheif { () throws(HeifError) in try image.decodeRGB() }
                try Self.withMagick(library) { () throws(MagickError) in
                    try pixels.withPixels { (width, height, bits, samples) throws(MagickError) in
                        try images.constitute(
                            width: width,
                            height: height,
                            channels: pixels.channels,
                            bitsPerChannel: bits,
                            pixels: samples
                        )
                    }
                    try images.markTopLeft()
                }
                return try Self.withMagick(library) { () throws(MagickError) in
                    try Self.attachMetadata(of: image, to: images)
                }
            }
        }
        report.warnings += try decoded.get()
        report.details["inputFormat"] = coder
        report.details["inputFrames"] = "1"
        report.details["inputWidth"] = String(images.width)
        report.details["inputHeight"] = String(images.height)
        return images
    }

    /// Puts the image's ICC profile and EXIF on the decoded image.
    ///
    /// - Returns: a warning when the metadata cannot be read or the EXIF item is malformed; the output then has no
    ///   EXIF.
    private static func attachMetadata(
        of image: borrowing HeifImageHandle,
        to images: borrowing Wand
    ) throws(MagickError) -> [String] {
        let metadata: HEIFMetadata
        do {
            metadata = try HEIFMetadata(of: image)
        } catch {
            return [
                "the colour profile and EXIF of the HEIF file could not be read, so the output has neither: \(error)"
            ]
        }
        if let profile = metadata.iccProfile {
            try images.setProfile("icc", to: profile)
        }
        guard metadata.exifItem != nil else { return [] }
        guard let exif = metadata.jpegExifProfile else {
            return [
                "the EXIF item of the HEIF file has no TIFF header where its offset points, so the output has no EXIF"
            ]
        }
        try images.setProfile("exif", to: exif)
        return []
    }
}

extension HeifError {
    /// What a failed read or decode means for the job: beyond libheif's security limits the image is too large;
    /// a codec without a decoder here is an unsupported input; anything else is a damaged file.
    var conversionFailure: ConversionFailure {
        if self.subcode == heif_suberror_Security_limit_exceeded.rawValue {
            return ConversionFailure(.limitExceeded, "the image exceeds libheif's limits: \(self)")
        }
        if self.code == heif_error_Unsupported_feature.rawValue || self.code == heif_error_Unsupported_filetype.rawValue
        {
            return ConversionFailure(.unsupportedInput, "cannot decode the input: \(self)")
        }
        return ConversionFailure(.corruptInput, "cannot decode the input: \(self)")
    }
}
