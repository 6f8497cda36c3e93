import ChuteCatalog
import ChuteCore
import ChuteMagick

extension PDFEngine {
    /// The EXIF orientations of a JPEG that a page's `/Rotate` shows upright, with that rotation; the mirrored ones
    /// are decoded and turned instead.
    private static let pageRotations = [1: 0, 3: 180, 6: 90, 8: 270]
    /// The largest side of a page, in points: 200 inches, the most PDF readers accept.
    private static let pageSideLimit = 14_400.0

    /// Lays the image in `bytes` on a page of its own at the end of `document`, sized by the rule's `pageSize` and
    /// `margin`. A JPEG of 8-bit grey or RGB samples is stored as it is (`/DCTDecode`), turned upright by the page's
    /// `/Rotate` when its EXIF orientation says so; any other image the image engine reads is decoded, turned
    /// upright, flattened onto white and stored as a JPEG at the rule's `quality`, or losslessly (Flate) with
    /// `lossless`.
    ///
    /// - Parameter request: the job, for its options and limits, with `input` the image's path.
    /// - Returns: the image engine's warnings.
    /// - Throws: ``ConversionFailure``: as the image engine fails for an image it cannot read; `unsupportedInput`
    ///   when the margin leaves no room on the page.
    static func appendImage(
        _ bytes: [UInt8],
        to document: PDFDocument,
        request: ConversionRequest
    ) throws(ConversionFailure) -> [String] {
        var stored: (Picture, [String])?
        if MediaType.sniff(bytes.prefix(MediaType.headerLength)) == .jpeg {
            let headers = try ImageEngine.picture(from: bytes, request: request, decoding: false)
            if headers.0.samples != nil, headers.0.bitsPerSample == 8,
                Self.pageRotations[headers.0.orientation] != nil
            {
                stored = headers
            }
        }
        let picture: Picture
        var warnings: [String]
        if let stored {
            (picture, warnings) = stored
        } else {
            (picture, warnings) = try ImageEngine.picture(from: bytes, request: request, decoding: true)
        }
        let rotation = stored == nil ? 0 : Self.pageRotations[picture.orientation] ?? 0
        let dpi = picture.dotsPerInch ?? (72, 72)
        // The image's size in points, upright.
        var size = (Double(picture.width) * 72 / dpi.x, Double(picture.height) * 72 / dpi.y)
        if rotation % 180 != 0 { size = (size.1, size.0) }
        let margin = request.options[PDFOptions.margin].flatMap(PDFOptions.points) ?? 0
        var page: (width: Double, height: Double)
        var drawn: (width: Double, height: Double)
        if let paper = (request.options[PDFOptions.pageSize] ?? .image).points {
            page = size.0 > size.1 ? (paper.height, paper.width) : paper
            let room = (page.width - 2 * margin, page.height - 2 * margin)
            guard room.0 > 0, room.1 > 0 else {
                throw ConversionFailure(.unsupportedInput, "the margin leaves no room for the image on the page")
            }
            let scale = min(room.0 / size.0, room.1 / size.1)
            drawn = (size.0 * scale, size.1 * scale)
        } else {
            drawn = size
            page = (size.0 + 2 * margin, size.1 + 2 * margin)
            let shrink = min(1, Self.pageSideLimit / max(page.width, page.height))
            page = (page.width * shrink, page.height * shrink)
            drawn = (drawn.width * shrink, drawn.height * shrink)
        }
        let data: PDFDocument.PageImage.Data
        if stored != nil {
            data = .jpeg(bytes)
        } else if request.options[PDFOptions.lossless] == true {
            data = .pixels(picture.pixels)
        } else {
            data = .jpeg(try Self.jpeg(of: picture, request: request, warnings: &warnings))
        }
        let image = PDFDocument.PageImage(
            data: data,
            width: picture.width,
            height: picture.height,
            isGray: picture.samples == .gray,
            rotation: rotation
        )
        try Self.run { () throws(PDFError) in try document.appendImagePage(image, pageSize: page, drawnSize: drawn) }
        return warnings
    }

    /// The image engine's JPEG, for the pages of decoded images.
    private static let jpegFormat = TargetFormat(name: "jpg", category: .image, engine: .image, coder: "JPEG")

    /// Encodes a decoded picture as a JPEG at the rule's `quality`, through the image engine's encoder.
    ///
    /// - Parameter warnings: the encoder's warnings are added to them.
    /// - Throws: ``ConversionFailure`` with ImageMagick's message.
    private static func jpeg(
        of picture: Picture,
        request: ConversionRequest,
        warnings: inout [String]
    ) throws(ConversionFailure) -> [UInt8] {
        let encoded = try Self.encode(
            picture.pixels,
            width: picture.width,
            height: picture.height,
            channels: picture.samples == .gray ? "I" : "RGB",
            format: Self.jpegFormat,
            options: request.options
        )
        warnings += encoded.warnings
        return encoded.bytes
    }
}
