import ChuteCore

extension ImageEngine {
    /// The lowest quality `maxFileSize` goes down to; below it, the image is scaled down instead.
    static let lowestQuality = 40
    /// How many times `maxFileSize` scales the image down before it gives up.
    private static let scalingAttempts = 8

    /// Encodes the images, at most `limit` bytes, at the highest quality from `quality` down to ``lowestQuality``,
    /// and, when even that is too large, at that quality and the largest scale that fits.
    ///
    /// The quality is searched by bisection, assuming (as holds for JPEG, WebP and HEIC) that a lower quality
    /// never gives a larger file: at most one encode at `quality` and 6 more. The scale comes from the square root
    /// of the ratio of the limit to the size at the lowest quality, shrunk a little, so one or two more encodes
    /// usually suffice. The output is verified as any other (see ``finish(_:_:format:library:report:)``), and the report's
    /// details record `quality` (the quality chosen), `encodes`, and `scale` when the image was scaled down.
    ///
    /// - Throws: ``MagickError`` with code `geometry` when no scale lands under the limit.
    static func encode(
        _ images: borrowing Wand,
        format: TargetFormat,
        within limit: Int,
        from quality: Int,
        library: MagickLibrary,
        report: inout ConversionReport
    ) throws(MagickError) -> MagickBlob {
        var encodes = 0
        func encode(_ wand: borrowing Wand, at quality: Int) throws(MagickError) -> MagickBlob {
            try wand.forEachImage { () throws(MagickError) in try wand.setQuality(quality) }
            encodes += 1
            return try wand.encode(coder: format.coder, allImages: format.holdsSeveralFrames)
        }

        let first = try encode(images, at: quality)
        if first.count <= limit {
            report.details["quality"] = String(quality)
            report.details["encodes"] = String(encodes)
            try Self.finish(images, first, format: format, library: library, report: &report)
            return first
        }
        var (low, high) = (min(Self.lowestQuality, quality - 1), quality - 1)
        var best: MagickBlob?
        var bestQuality = low
        var smallest = first.count
        while low <= high {
            let middle = (low + high) / 2
            let output = try encode(images, at: middle)
            if output.count <= limit {
                bestQuality = middle
                best = consume output
                low = middle + 1
            } else {
                smallest = output.count
                high = middle - 1
            }
        }
        switch consume best {
        case .some(let output):
            report.details["quality"] = String(bestQuality)
            report.details["encodes"] = String(encodes)
            try Self.finish(images, output, format: format, library: library, report: &report)
            return output
        case .none:
            break
        }

        try images.selectImage(at: 0)
        let (width, height) = (images.width, images.height)
        var scale = 1.0
        for _ in 0..<Self.scalingAttempts {
            scale *= min(0.9, (Double(limit) / Double(smallest)).squareRoot() * 0.95)
            let scaled = try images.cloned()
            let size = (max(1, Int(Double(width) * scale)), max(1, Int(Double(height) * scale)))
            try scaled.forEachImage { () throws(MagickError) in try scaled.resize(width: size.0, height: size.1) }
            let output = try encode(scaled, at: bestQuality)
            if output.count <= limit {
                report.details["quality"] = String(bestQuality)
                report.details["encodes"] = String(encodes)
                report.details["scale"] = String(Double(Int(scale * 1000)) / 1000)
                try Self.finish(scaled, output, format: format, library: library, report: &report)
                return output
            }
            smallest = output.count
        }
        throw MagickError(
            code: .geometry,
            function: "maxFileSize",
            severity: 0,
            message: "no quality from \(quality) down to \(bestQuality) and no scale down to "
                + "\(Double(Int(scale * 1000)) / 1000) gives an output of at most \(limit) bytes"
        )
    }
}
