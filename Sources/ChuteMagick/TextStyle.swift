import CMagickWand

/// Owns one `DrawingWand`: the font, size and colours with which text is drawn onto an image.
struct TextStyle: ~Copyable {
    private let handle: OpaquePointer

    /// Creates a style drawing UTF-8 text with the font file at `font`, `size` points high, filled with `fill` and
    /// outlined with `stroke`. The corresponding C functions are `NewDrawingWand`, `DrawSetFont`, `DrawSetFontSize`,
    /// `DrawSetTextEncoding`, `DrawSetFillColor`, `DrawSetStrokeColor`, `DrawSetStrokeWidth` and
    /// `DrawSetTextAntialias`.
    init(font: String, size: Double, fill: borrowing PixelColor, stroke: borrowing PixelColor, strokeWidth: Double) {
        _ = MagickLibrary.shared
        // NewDrawingWand aborts the process rather than return NULL when memory runs out.
        let handle: OpaquePointer = NewDrawingWand()
        // DrawSetFont only records the name; a font that cannot be read fails the annotation that uses it.
        _ = DrawSetFont(handle, font)
        DrawSetFontSize(handle, size)
        DrawSetTextEncoding(handle, "UTF-8")
        DrawSetTextAntialias(handle, MagickTrue)
        fill.withUnsafeHandle { DrawSetFillColor(handle, $0) }
        stroke.withUnsafeHandle { DrawSetStrokeColor(handle, $0) }
        DrawSetStrokeWidth(handle, strokeWidth)
        self.handle = handle
    }

    deinit {
        _ = DestroyDrawingWand(self.handle)
    }

    /// Runs `body` with the `DrawingWand`, which must not be kept.
    func withUnsafeHandle<Result: ~Copyable, Failure: Error>(
        _ body: (OpaquePointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try body(self.handle)
    }
}
