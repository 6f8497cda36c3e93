/// How the pixels of a headerless raw image (RGB or YUV samples only) are laid out: what the file cannot say
/// about itself, so a rule must.
///
/// Raw RGB is interleaved `R G B` samples, row by row. Raw YUV is ImageMagick's `YUV` coder layout: planar
/// 4:2:0 (the Y plane, then the U and V planes at half the width and height; the byte layout of FFmpeg's `yuv420p`
/// and of I420), so its width and height must be even. Samples of 16 bits are most significant byte first, as
/// ImageMagick reads and writes them.
package struct RawPixelLayout: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The kind of samples.
    package enum Samples: String, Sendable, Hashable, Codable, CaseIterable, OptionValueConvertible {
        /// Interleaved red, green and blue. The ImageMagick coder is `RGB`.
        case rgb
        /// Planar Y, U, V at 4:2:0. The ImageMagick coder is `YUV`.
        case yuv

        /// The ImageMagick coder that reads and writes these samples.
        package var coder: String {
            switch self {
            case .rgb: "RGB"
            case .yuv: "YUV"
            }
        }
    }

    /// Why a layout cannot be used.
    package struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        package var description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// The bit depths a sample may have.
    package static let depths: Set<Int> = [8, 16]

    package let samples: Samples
    package let width: Int
    package let height: Int
    /// Bits per sample: 8 or 16.
    package let depth: Int

    /// Creates a layout after checking it.
    ///
    /// - Parameters:
    ///   - samples: RGB or YUV.
    ///   - width: pixels per row, at least 1 (even for YUV).
    ///   - height: rows, at least 1 (even for YUV).
    ///   - depth: bits per sample, 8 or 16.
    /// - Throws: ``Problem`` naming the value that is out of range.
    package init(samples: Samples, width: Int, height: Int, depth: Int) throws(Problem) {
        guard width >= 1, height >= 1 else {
            throw Problem(description: "a raw image needs a width and a height of at least 1, not \(width)x\(height)")
        }
        guard Self.depths.contains(depth) else {
            throw Problem(description: "a raw sample has 8 or 16 bits, not \(depth)")
        }
        if samples == .yuv {
            try Self.checkEven(width: width, height: height)
        }
        self.samples = samples
        self.width = width
        self.height = height
        self.depth = depth
    }

    /// The exact size of a file holding one image in this layout, in bytes.
    package var byteCount: Int {
        Self.byteCount(samples: self.samples, width: self.width, height: self.height, depth: self.depth)
    }

    package var description: String { "raw \(self.samples.coder) \(self.width)x\(self.height) at \(self.depth) bits" }

    /// The size of one image of `samples` at `width` × `height` and `depth` bits per sample, in bytes.
    package static func byteCount(samples: Samples, width: Int, height: Int, depth: Int) -> Int {
        let bytesPerSample = depth / 8
        switch samples {
        case .rgb:
            return width * height * 3 * bytesPerSample
        case .yuv:
            return (width * height + 2 * (width / 2) * (height / 2)) * bytesPerSample
        }
    }

    /// Refuses an odd width or height, which 4:2:0 YUV cannot hold (ImageMagick's `YUV` coder writes such an
    /// image in a size that nothing reads back).
    ///
    /// - Throws: ``Problem`` naming the size.
    package static func checkEven(width: Int, height: Int) throws(Problem) {
        guard width.isMultiple(of: 2), height.isMultiple(of: 2) else {
            throw Problem(
                description: "YUV 4:2:0 needs an even width and height, and the image is \(width)x\(height)"
            )
        }
    }
}
