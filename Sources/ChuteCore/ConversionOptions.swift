/// The parameters of one conversion, shared by rules, `chute convert` and the worker protocol.
///
/// Every field is optional: `nil` means the engine's default. Fields that an engine does not use are refused when a
/// rule is read, so a value is never silently ignored.
package struct ConversionOptions: Sendable, Equatable, Codable {
    /// `quality` (number, 0 < q ≤ 1, or a percentage 1 < q ≤ 100): lossy encoder quality; images default to 0.85.
    package var quality: Double?
    /// `width` (int, pixels): the output is at most this wide; the aspect ratio is kept and nothing is upscaled.
    package var width: Int?
    /// `height` (int, pixels): the output is at most this high; the aspect ratio is kept and nothing is upscaled.
    package var height: Int?
    /// `strip` (bool, default false): remove EXIF, GPS, XMP and comments from the output (ICC profiles are kept).
    package var strip: Bool?

    package init(quality: Double? = nil, width: Int? = nil, height: Int? = nil, strip: Bool? = nil) {
        self.quality = quality
        self.width = width
        self.height = height
        self.strip = strip
    }

    /// The quality as a fraction in (0, 1], whichever way it was written.
    package var qualityFraction: Double? {
        guard let quality else { return nil }
        return quality > 1 ? quality / 100 : quality
    }
}
