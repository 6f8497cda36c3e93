import CTurboJPEG

/// Owns one TurboJPEG transform handle: rotates and flips JPEG images in the DCT domain, without decoding them, so
/// that no pixel changes value.
///
/// - Important: a handle is not thread-safe; create, use and drop it in one conversion.
struct JPEGTransformer: ~Copyable {
    /// A lossless transform. The corresponding C constants are `TJXOP_HFLIP` … `TJXOP_ROT270`.
    enum Operation: Sendable {
        case flipHorizontal, rotate180, flipVertical, transpose, rotate90, transverse, rotate270

        /// The transform that shows an image with EXIF orientation `orientation` (2 to 8) upright.
        init?(orientation: Int) {
            switch orientation {
            case 2: self = .flipHorizontal
            case 3: self = .rotate180
            case 4: self = .flipVertical
            case 5: self = .transpose
            case 6: self = .rotate90
            case 7: self = .transverse
            case 8: self = .rotate270
            default: return nil
            }
        }

        /// Whether the transform swaps width and height.
        var swapsDimensions: Bool { [.transpose, .rotate90, .transverse, .rotate270].contains(self) }

        fileprivate var code: Int32 {
            let operation =
                switch self {
                case .flipHorizontal: TJXOP_HFLIP
                case .rotate180: TJXOP_ROT180
                case .flipVertical: TJXOP_VFLIP
                case .transpose: TJXOP_TRANSPOSE
                case .rotate90: TJXOP_ROT90
                case .transverse: TJXOP_TRANSVERSE
                case .rotate270: TJXOP_ROT270
                }
            return Int32(operation.rawValue)
        }

        /// Whether the transform moves the right edge (so the width must be whole blocks) and the bottom edge (so
        /// the height must be), as libjpeg-turbo's `jtransform_perfect_transform` decides.
        fileprivate var movedEdges: (right: Bool, bottom: Bool) {
            switch self {
            case .flipHorizontal, .rotate270: (true, false)
            case .flipVertical, .rotate90: (false, true)
            case .rotate180, .transverse: (true, true)
            case .transpose: (false, false)
            }
        }
    }

    private let handle: UnsafeMutableRawPointer

    /// Creates a transform handle. The corresponding C function is `tjInitTransform`.
    ///
    /// - Throws: ``TurboJPEGError`` when the library cannot allocate one.
    init() throws(TurboJPEGError) {
        guard let handle = tjInitTransform() else {
            throw TurboJPEGError(code: .failed, function: "tjInitTransform", message: Self.message(nil))
        }
        self.handle = handle
    }

    deinit {
        _ = tjDestroy(self.handle)
    }

    /// Transforms `jpeg` losslessly, copying all its markers (metadata included) to the result.
    ///
    /// A transform that moves an edge made of partial blocks (an image whose width or height is not a multiple of
    /// the block size, 8 or 16 pixels by its chroma subsampling) cannot be lossless, and is refused rather than
    /// trimmed. The corresponding C functions are `tjDecompressHeader3` and `tjTransform` with `TJXOPT_PERFECT`.
    ///
    /// - Returns: the transformed JPEG.
    /// - Throws: ``TurboJPEGError``: ``TurboJPEGError/Code/notPerfect`` for such an image, `failed` with the
    ///   library's message otherwise.
    func transform(_ jpeg: [UInt8], _ operation: Operation) throws(TurboJPEGError) -> [UInt8] {
        var width: Int32 = 0
        var height: Int32 = 0
        var subsampling: Int32 = 0
        var colorspace: Int32 = 0
        let header = jpeg.withUnsafeBufferPointer {
            tjDecompressHeader3(
                self.handle,
                $0.baseAddress,
                UInt(jpeg.count),
                &width,
                &height,
                &subsampling,
                &colorspace
            )
        }
        guard header == 0 else { throw self.error("tjDecompressHeader3") }
        let block = Self.blockSize(subsampling: subsampling)
        let edges = operation.movedEdges
        if (edges.right && width % block.width != 0) || (edges.bottom && height % block.height != 0) {
            throw TurboJPEGError(
                code: .notPerfect,
                function: "tjTransform",
                message: "a \(width)x\(height) image in \(block.width)x\(block.height) blocks has partial blocks "
                    + "at an edge that the transform moves"
            )
        }
        var transform = tjtransform()
        transform.op = operation.code
        transform.options = TJXOPT_PERFECT
        var output: UnsafeMutablePointer<UInt8>?
        var outputSize: UInt = 0
        let status = jpeg.withUnsafeBufferPointer {
            tjTransform(self.handle, $0.baseAddress, UInt(jpeg.count), 1, &output, &outputSize, &transform, 0)
        }
        defer { tjFree(output) }
        guard status == 0, let output else { throw self.error("tjTransform") }
        return Array(UnsafeBufferPointer(start: output, count: Int(outputSize)))
    }

    /// The size of a JPEG block (an MCU) for a TurboJPEG subsampling: the C array `tjMCUWidth` and `tjMCUHeight`.
    private static func blockSize(subsampling: Int32) -> (width: Int32, height: Int32) {
        switch UInt32(bitPattern: subsampling) {
        case TJSAMP_422.rawValue: (16, 8)
        case TJSAMP_420.rawValue: (16, 16)
        case TJSAMP_440.rawValue: (8, 16)
        case TJSAMP_411.rawValue: (32, 8)
        default: (8, 8)  // 4:4:4 and greyscale
        }
    }

    /// The error of `function`, with the handle's message. The corresponding C function is `tjGetErrorStr2`.
    private func error(_ function: String) -> TurboJPEGError {
        TurboJPEGError(code: .failed, function: function, message: Self.message(self.handle))
    }

    /// The message of the last error on `handle`, or of the last handle creation when `nil`.
    private static func message(_ handle: UnsafeMutableRawPointer?) -> String {
        guard let text = tjGetErrorStr2(handle) else { return "TurboJPEG gave no reason" }
        return String(cString: text)
    }
}
