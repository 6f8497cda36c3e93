import ChuteCatalog
import ChuteCore

/// A picture that another engine lays out or stores itself: the PDF engine puts images on pages.
package struct Picture: Sendable {
    /// How the samples of ``pixels`` are laid out, 8 bits each.
    package enum Samples: Sendable {
        /// One grey level a pixel.
        case gray
        /// Red, green and blue.
        case rgb
    }

    /// The width in pixels, as stored (before ``orientation`` turns it).
    package var width: Int
    /// The height in pixels, as stored.
    package var height: Int
    /// The resolution the file gives, in dots per inch; `nil` when it gives none.
    package var dotsPerInch: (x: Double, y: Double)?
    /// The EXIF orientation still to apply, 1 to 8 (1: upright); always 1 once decoded.
    package var orientation: Int
    /// The samples: of ``pixels`` once decoded, else of the file's own image data (`nil`: neither grey nor RGB,
    /// such as CMYK).
    package var samples: Samples?
    /// The bits per sample of the file's own image data.
    package var bitsPerSample: Int
    /// Upright pixels flattened onto white, row by row without padding; empty when only the headers were read.
    /// With ``alpha``, the samples as they are, not flattened.
    package var pixels: [UInt8]
    /// The alpha of each pixel, 8 bits (0 transparent), when it was asked for and the picture has transparency.
    package var alpha: [UInt8]? = nil
}

extension ImageEngine {
    /// Reads a picture for another engine: the headers only, or its first frame decoded as the image engine
    /// decodes any input it reads (every type in ``decoders`` and camera RAW), turned upright as its orientation
    /// says, converted to sRGB (grey stays grey) and flattened onto white.
    ///
    /// - Parameters:
    ///   - bytes: the file's content.
    ///   - request: the job, for its limits (`maxPixels`).
    ///   - decoding: whether to decode the pixels, or only read the headers (of a type that can be pinged, JPEG).
    ///   - keepingAlpha: whether a decoded picture with transparency keeps it (``Picture/alpha``) rather than being
    ///     flattened onto white.
    /// - Returns: the picture, and ImageMagick's warnings.
    /// - Throws: ``ConversionFailure`` as ``convert(_:progress:)`` throws for an input it cannot read.
    package static func picture(
        from bytes: [UInt8],
        request: ConversionRequest,
        decoding: Bool,
        keepingAlpha: Bool = false
    ) throws(ConversionFailure) -> (Picture, warnings: [String]) {
        let library = MagickLibrary.shared
        library.limitThreads(to: 1)
        var report = ConversionReport(outputBytes: 0)
        let (type, coder) = try Self.inspect(bytes, request: request, library: library, report: &report)
        if !decoding, let coder {
            let headers = Wand()
            let picture = try Self.withMagick(library) { () throws(MagickError) -> Picture in
                try headers.read(bytes, coder: coder, headersOnly: true)
                try headers.selectImage(at: 0)
                return Picture(
                    width: headers.width,
                    height: headers.height,
                    dotsPerInch: headers.dotsPerInch,
                    orientation: headers.orientation,
                    samples: headers.isGray ? .gray : headers.isRGB ? .rgb : nil,
                    bitsPerSample: headers.depth,
                    pixels: []
                )
            }
            return (picture, report.warnings)
        }
        let images = try Self.decode(
            bytes,
            layout: nil,
            type: type,
            coder: coder,
            request,
            library: library,
            report: &report,
            progress: { _ in }
        )
        let picture = try Self.withMagick(library) { () throws(MagickError) -> Picture in
            try images.keepFirstImage()
            let dotsPerInch = images.dotsPerInch
            try images.autoOrient()
            let alpha = keepingAlpha && images.hasAlpha ? try images.exportPixels(channels: "A") : nil
            if images.hasAlpha && alpha == nil { try images.removeAlpha(onto: PixelColor(named: "white")) }
            let gray = images.isGray
            if !gray { try images.makeSRGB() }
            return Picture(
                width: images.width,
                height: images.height,
                dotsPerInch: dotsPerInch,
                orientation: 1,
                samples: gray ? .gray : .rgb,
                bitsPerSample: 8,
                pixels: try images.exportPixels(channels: gray ? "I" : "RGB"),
                alpha: alpha
            )
        }
        return (picture, report.warnings)
    }

    /// Reads a rule's `watermarkImage` for another engine: the file (at most 32 MiB, opened by its path, since it
    /// comes from the rules file) decoded as ``picture(from:request:decoding:keepingAlpha:)`` decodes, keeping its
    /// transparency.
    ///
    /// - Throws: ``ConversionFailure``: a file that cannot be read, or does not decode.
    package static func watermarkPicture(
        at path: String,
        request: ConversionRequest
    ) throws(ConversionFailure) -> (Picture, warnings: [String]) {
        let bytes = try Self.withMagick(MagickLibrary.shared) { () throws(MagickError) in try Watermark.read(path) }
        return try Self.picture(from: bytes, request: request, decoding: true, keepingAlpha: true)
    }

    /// Encodes pixels drawn elsewhere (a PDF page that poppler drew) for one of the image engine's formats, at the
    /// rule's `quality` where the format is lossy, and checks that the output reads back at their size.
    ///
    /// - Parameters:
    ///   - pixels: `width` × `height` pixels, 8 bits a sample, row by row without padding.
    ///   - channels: the order of one pixel's samples, such as `BGRP` (`P`: a padding byte).
    ///   - size: the size to resample the picture to first, if any.
    ///   - format: the target, one of the image engine's formats.
    ///   - options: the rule's options; only `quality` is read.
    /// - Returns: the encoded file, and ImageMagick's warnings.
    /// - Throws: ``ConversionFailure`` with ImageMagick's message.
    package static func encode(
        pixels: UnsafeRawBufferPointer,
        width: Int,
        height: Int,
        channels: String,
        size: (width: Int, height: Int)? = nil,
        format: TargetFormat,
        options: ConversionOptions
    ) throws(ConversionFailure) -> (bytes: [UInt8], warnings: [String]) {
        let library = MagickLibrary.shared
        library.limitThreads(to: 1)
        var report = ConversionReport(outputBytes: 0)
        let image = Wand()
        let bytes = try Self.withMagick(library) { () throws(MagickError) -> [UInt8] in
            try image.constitute(width: width, height: height, channels: channels, bitsPerChannel: 8, pixels: pixels)
            if let size, size != (width, height) {
                try image.resize(width: size.width, height: size.height)
            }
            if ImageOperation.lossyTargets.contains(format.name) {
                try image.setQuality(ImageOperation.quality(options))
            }
            let output = try image.encode(coder: format.coder, allImages: false)
            try Self.finish(image, output, format: format, library: library, report: &report)
            return output.withUnsafeBytes { Array($0) }
        }
        return (bytes, report.warnings)
    }
}
