import ChuteCatalog
import ChuteCore
import ChuteMagick

extension PDFEngine {
    /// How much finer than the rule's `dpi` an image must be to be resampled: a scan at 300 dpi on a page whose
    /// size is rounded is not resampled to 299.
    private static let resamplingMargin = 1.05

    /// With `compress` and `dpi`: stores every page image finer than `dpi` at that resolution, re-encoded as a JPEG
    /// at the rule's `quality` (0.85 by default), when that is smaller than what it replaces. The images are those
    /// ``PDFDocument/resamplableImages()`` finds (8-bit grey or RGB, JPEG or Flate, no masks), their resolution
    /// estimated from the pages that show them; the others are left as they are.
    ///
    /// - Returns: what was done, for the sidecar's `imagesResampled`, how many images were resampled, and the
    ///   decoders' warnings.
    /// - Throws: ``ConversionFailure``: an image that does not decode is `corruptInput`, with the decoder's message.
    static func resampleImages(
        of document: PDFDocument,
        to dpi: Double,
        request: ConversionRequest
    ) throws(ConversionFailure) -> (summary: String, count: Int, warnings: [String]) {
        guard let jpeg = Engines.image.formats.first(where: { $0.name == "jpg" }) else {
            throw ConversionFailure(.internalError, "the image engine writes no jpg")
        }
        let images = try Self.run { () throws(PDFError) in try document.resamplableImages() }
        var warnings: [String] = []
        var (count, before, after) = (0, 0, 0)
        for image in images where image.dotsPerInch > dpi * Self.resamplingMargin {
            let scale = dpi / image.dotsPerInch
            let size = (
                width: max(1, Int((Double(image.width) * scale).rounded())),
                height: max(1, Int((Double(image.height) * scale).rounded()))
            )
            var pixels = try Self.run { () throws(PDFError) in
                try document.streamData(image.object, decoded: !image.isJPEG)
            }
            if image.isJPEG {
                // A PDF shows a JPEG's samples as stored; the image engine turns a picture by its EXIF orientation,
                // so a JPEG that has one other than upright is left as it is.
                let (headers, _) = try ImageEngine.picture(from: pixels, request: request, decoding: false)
                guard headers.orientation == 1 else { continue }
                let (picture, decoded) = try ImageEngine.picture(from: pixels, request: request, decoding: true)
                // A JPEG whose samples are not the image's colour space is left too.
                guard picture.width == image.width, picture.height == image.height,
                    (picture.samples == .gray) == image.isGray
                else { continue }
                pixels = picture.pixels
                warnings += decoded
            }
            guard pixels.count == image.width * image.height * (image.isGray ? 1 : 3) else { continue }
            let encoded = try pixels.withUnsafeBytes { buffer in
                Result { () throws(ConversionFailure) in
                    try ImageEngine.encode(
                        pixels: buffer,
                        width: image.width,
                        height: image.height,
                        channels: image.isGray ? "I" : "RGB",
                        size: size,
                        format: jpeg,
                        options: request.options
                    )
                }
            }.get()
            guard encoded.bytes.count < image.storedBytes else { continue }
            document.replaceImage(image, jpeg: encoded.bytes, width: size.width, height: size.height)
            warnings += encoded.warnings
            count += 1
            before += image.storedBytes
            after += encoded.bytes.count
        }
        let summary =
            "\(count) of \(images.count) images to \(OptionValue.number(dpi)) dpi"
            + (count > 0 ? ", \(before) bytes to \(after)" : "")
        return (summary, count, warnings)
    }
}
