import CMagickWand

/// Owns one `PixelWand`: a colour to hand to MagickWand calls such as `MagickSetImageBackgroundColor`.
struct PixelColor: ~Copyable {
    private let handle: OpaquePointer

    /// Creates a colour from an ImageMagick colour name such as `white` or `#ff000080`.
    /// The corresponding C functions are `NewPixelWand` and `PixelSetColor`.
    ///
    /// - Parameter name: a colour that ImageMagick knows; an unknown name is a programming error.
    init(named name: String) {
        _ = MagickLibrary.shared
        // NewPixelWand aborts the process rather than return NULL when memory runs out.
        let handle: OpaquePointer = NewPixelWand()
        guard PixelSetColor(handle, name) == MagickTrue else {
            _ = DestroyPixelWand(handle)
            preconditionFailure("ImageMagick does not know the colour \(name)")
        }
        self.handle = handle
    }

    deinit {
        _ = DestroyPixelWand(self.handle)
    }

    /// Runs `body` with the `PixelWand`, which must not be kept.
    func withUnsafeHandle<Result>(_ body: (OpaquePointer) -> Result) -> Result {
        body(self.handle)
    }
}
