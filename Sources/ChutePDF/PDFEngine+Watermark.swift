import ChuteCatalog
import ChuteCore
import ChuteMagick

extension PDFEngine {
    /// The rule's watermark: its `watermark` text or its `watermarkImage`, with `watermarkPosition` (bottom right by
    /// default), `watermarkOpacity` (0.5), `watermarkSize` (0.25 of the page's width) and `watermarkRotation` (0°);
    /// `nil` when the rule has neither.
    ///
    /// - Throws: ``ConversionFailure``: `unsupportedInput` for text beyond Latin-1 (Helvetica's); the image engine's
    ///   failure for a `watermarkImage` that cannot be read.
    static func watermark(_ request: ConversionRequest) throws(ConversionFailure) -> PDFDocument.Watermark? {
        let options = request.options
        let position = options[CommonOptions.watermarkPosition] ?? .southeast
        let opacity = options[CommonOptions.watermarkOpacity] ?? 0.5
        let size = options[CommonOptions.watermarkSize] ?? 0.25
        let rotation = options[PDFOptions.watermarkRotation] ?? 0
        if let text = options[CommonOptions.watermark] {
            guard
                let watermark = PDFDocument.Watermark(
                    text,
                    position: position,
                    opacity: opacity,
                    size: size,
                    rotation: rotation
                )
            else {
                throw ConversionFailure(.unsupportedInput, "a PDF watermark is drawn in Helvetica: Latin-1 text only")
            }
            return watermark
        }
        guard let path = options[ImageOptions.watermarkImage] else { return nil }
        let (picture, _) = try ImageEngine.watermarkPicture(at: path, request: request)
        let stamp = PDFDocument.Watermark.Stamp(
            samples: picture.pixels,
            alpha: picture.alpha,
            width: picture.width,
            height: picture.height,
            isGray: picture.samples == .gray
        )
        return PDFDocument.Watermark(
            mark: .picture(stamp),
            position: position,
            opacity: opacity,
            size: size,
            rotation: rotation
        )
    }
}
