import CMagickWand
import ChuteCatalog
import ChuteCore
import SystemPackage

/// A mark laid on every image of a rule: a line of text or an image file, at a position, a width relative to the
/// image's, and an opacity.
struct Watermark: Equatable {
    /// What the mark is.
    enum Content: Equatable {
        /// A line of text, drawn white with a dark outline.
        case text(String)
        /// An image file, by absolute path, read by the worker at each job.
        case image(path: String)
    }

    var content: Content
    var position: Gravity
    /// From 0 (invisible) to 1 (opaque).
    var opacity: Double
    /// The mark's width as a fraction of the image's width.
    var size: Double

    /// The font of text marks: DejaVu Sans (Debian's `fonts-dejavu-core`), by path, since ImageMagick 6's default
    /// font (Helvetica through Ghostscript) is usually missing.
    static let font = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
    /// The largest watermark image file read, in bytes.
    static let imageByteLimit = 32 << 20

    /// Lays the mark on the wand's current image.
    ///
    /// The mark is made at the width `size` gives, faded to `opacity`, and placed by `position` with a margin of 2 %
    /// of the image's shorter side.
    ///
    /// - Throws: ``MagickError``, with code `watermark` when the image file cannot be read or decoded.
    func apply(to images: borrowing Wand) throws(MagickError) {
        let width = max(1, Int((Double(images.width) * self.size).rounded()))
        let mark: Wand
        switch self.content {
        case .text(let text):
            mark = try Self.textMark(text, width: width)
        case .image(let path):
            mark = try Self.imageMark(path, width: width)
        }
        try mark.fade(to: self.opacity)
        let margin = min(images.width, images.height) / 50
        let corner = self.position.origin(
            width: mark.width,
            height: mark.height,
            imageWidth: images.width - 2 * margin,
            imageHeight: images.height - 2 * margin
        )
        try images.composite(mark, x: corner.x + margin, y: corner.y + margin)
    }

    /// The text on a transparent canvas, at the point size that makes it `width` pixels wide.
    private static func textMark(_ text: String, width: Int) throws(MagickError) -> Wand {
        let white = PixelColor(named: "white")
        let black = PixelColor(named: "black")
        let probe = try Wand.makeCanvas(width: 1, height: 1)
        let reference = 100.0
        let measured = try probe.textMetrics(
            text,
            style: TextStyle(font: Self.font, size: reference, fill: white, stroke: black, strokeWidth: 0)
        )
        let points = max(1, reference * Double(width) / max(1, measured.width))
        let style = TextStyle(font: Self.font, size: points, fill: white, stroke: black, strokeWidth: points / 30)
        let metrics = try probe.textMetrics(text, style: style)
        let padding = Int((points / 30).rounded(.up)) + 1
        let canvas = try Wand.makeCanvas(
            width: Int(metrics.width.rounded(.up)) + 2 * padding,
            height: Int(metrics.height.rounded(.up)) + 2 * padding
        )
        try canvas.annotate(text, style: style, x: Double(padding), y: Double(padding) + metrics.ascender)
        return canvas
    }

    /// The image file's first frame, upright, scaled to `width` pixels wide, with an alpha channel.
    private static func imageMark(_ path: String, width: Int) throws(MagickError) -> Wand {
        let bytes = try Self.read(path)
        guard let type = MediaType.sniff(bytes), let coder = ImageOptions.decoders[type] else {
            throw MagickError(
                code: .watermark,
                function: "watermark",
                severity: 0,
                message: "\(path) is not in an image format Chute decodes"
            )
        }
        let mark = Wand()
        try mark.read(bytes, coder: coder)
        try mark.keepFirstImage()
        try mark.autoOrient()
        let height = max(1, Int((Double(mark.height) * Double(width) / Double(max(1, mark.width))).rounded()))
        try mark.resize(width: width, height: height)
        return mark
    }

    /// Reads the watermark file. It comes from the rules file, not from a drop folder, so a plain open is safe.
    static func read(_ path: String) throws(MagickError) -> [UInt8] {
        do {
            let descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
            defer { try? descriptor.close() }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
                if count == 0 { return bytes }
                bytes += chunk[..<count]
                guard bytes.count <= Self.imageByteLimit else {
                    throw MagickError(
                        code: .watermark,
                        function: "read",
                        severity: 0,
                        message: "\(path) is larger than \(Self.imageByteLimit) bytes"
                    )
                }
            }
        } catch let error as MagickError {
            throw error
        } catch {
            throw MagickError(code: .watermark, function: "open", severity: 0, message: "\(path): \(error)")
        }
    }
}
