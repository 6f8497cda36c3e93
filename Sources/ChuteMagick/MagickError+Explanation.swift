import ChuteCore

extension MagickError {
    /// The format and the library behind each coder Chute reads with, for ``plainReason``.
    private static let formats: [String: (name: String, library: String)] = [
        "TIFF": ("TIFF", "libtiff"), "JPEG": ("JPEG", "libjpeg"), "PNG": ("PNG", "libpng"), "WEBP": ("WebP", "libwebp"),
        "JP2": ("JPEG 2000", "OpenJPEG"), "J2K": ("JPEG 2000", "OpenJPEG"), "EXR": ("OpenEXR", "OpenEXR"),
        "GIF": ("GIF", "ImageMagick"), "BMP": ("BMP", "ImageMagick"), "TGA": ("TGA", "ImageMagick"),
    ]

    /// What a failed read means, in a plain sentence for the common cases, and the library that said it: a file cut
    /// short or damaged (`the TIFF is cut short or damaged: a strip could not be read`, for libtiff's `Read error on
    /// strip 0; got 18446744073709550836 bytes`), a compression the build does not decode, or content that is not
    /// the format it starts like; `nil` for other failures, which keep the library's message alone.
    var plainReason: (sentence: String, library: String)? {
        guard self.code == .decode, let coder = self.coder else { return nil }
        let (format, library) = Self.formats[coder] ?? (coder, "ImageMagick")
        let text = self.message.lowercased()
        func mentions(_ fragments: String...) -> Bool { fragments.contains { text.contains($0) } }
        if mentions("compression") && mentions("not implemented", "not supported", "unsupported", "not configured") {
            return ("the \(format) uses a compression that this build cannot decode", library)
        }
        if mentions("improper image header", "not a jpeg file", "not a tiff", "bad magic number") {
            return ("the file is not a valid \(format), whatever its name says, or its header is damaged", library)
        }
        let part: String? =
            if mentions("strip") {
                "a strip could not be read"
            } else if mentions("scanline") {
                "a scan line could not be read"
            } else if mentions("tile") {
                "a tile could not be read"
            } else if mentions("directory") {
                "its directory of images could not be read"
            } else {
                nil
            }
        // libpng's errors reach ImageMagick 6 without a message: a PNG that fails to decode is cut short or damaged.
        let damaged =
            part != nil || self.message.isEmpty
            || mentions(
                "premature end",
                "corrupt",
                "read error",
                "unexpected end",
                "insufficient image data",
                "unable to read image data",
                "not enough",
                "crc error",
                "incorrect data check",
                "truncat",
                "no image in the input"
            )
        guard damaged else { return nil }
        return ("the \(format) is cut short or damaged" + (part.map { ": \($0)" } ?? ""), library)
    }
}
