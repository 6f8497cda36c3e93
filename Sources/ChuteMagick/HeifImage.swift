import CHeif

/// Owns one decoded `heif_image` in an interleaved RGB or RGBA layout (``HeifImageHandle/decodeRGB()``).
///
/// The corresponding C function for release is `heif_image_release`.
struct HeifImage: ~Copyable {
    private let image: OpaquePointer
    /// The order of the samples of one pixel: `RGB` or `RGBA`.
    let channels: String

    /// Adopts an image that `heif_decode_image` returned.
    init(takingOwnershipOf image: OpaquePointer, channels: String) {
        self.image = image
        self.channels = channels
    }

    deinit {
        heif_image_release(self.image)
    }

    /// Calls `body` with the pixels, row by row without padding, and the bits of each sample as stored (8 or 16;
    /// 16-bit samples scaled from the image's own depth to the full 16 bits).
    ///
    /// The corresponding C functions are `heif_image_get_width`, `heif_image_get_height`,
    /// `heif_image_get_bits_per_pixel_range` and `heif_image_get_plane_readonly`.
    func withPixels<Value>(
        _ body: (_ width: Int, _ height: Int, _ bitsPerChannel: Int, _ pixels: UnsafeRawBufferPointer)
            throws(MagickError) -> Value
    ) throws(MagickError) -> Value {
        let channel = heif_channel_interleaved
        let width = Int(heif_image_get_width(self.image, channel))
        let height = Int(heif_image_get_height(self.image, channel))
        let depth = Int(heif_image_get_bits_per_pixel_range(self.image, channel))
        var stride: Int32 = 0
        guard width > 0, height > 0, let plane = heif_image_get_plane_readonly(self.image, channel, &stride) else {
            throw MagickError(
                code: .decode,
                function: "heif_image_get_plane_readonly",
                severity: 0,
                message: "libheif decoded no pixels"
            )
        }
        let samples = width * self.channels.count
        guard depth > 8 else {
            if Int(stride) == samples {
                return try body(width, height, 8, UnsafeRawBufferPointer(start: plane, count: samples * height))
            }
            var rows = [UInt8](repeating: 0, count: samples * height)
            rows.withUnsafeMutableBytes { output in
                for row in 0..<height {
                    output.baseAddress!.advanced(by: row * samples)
                        .copyMemory(from: plane + row * Int(stride), byteCount: samples)
                }
            }
            // Array.withUnsafeBytes only rethrows untyped errors, so the typed error travels out in a Result.
            return try rows.withUnsafeBytes { pixels in
                Result { () throws(MagickError) in try body(width, height, 8, pixels) }
            }.get()
        }
        // Samples at 10 or 12 bits, little-endian, to the full 16-bit range the way ImageMagick scales depths: the
        // largest value stays the largest.
        let largest = UInt32(1 << depth - 1)
        var scaled = [UInt16](repeating: 0, count: samples * height)
        scaled.withUnsafeMutableBufferPointer { output in
            for row in 0..<height {
                let input = plane + row * Int(stride)
                for index in 0..<samples {
                    let value = UInt32(input[2 * index]) | UInt32(input[2 * index + 1]) << 8
                    output[row * samples + index] = UInt16((min(value, largest) * 65535 + largest / 2) / largest)
                }
            }
        }
        return try scaled.withUnsafeBytes { pixels in
            Result { () throws(MagickError) in try body(width, height, 16, pixels) }
        }.get()
    }
}
