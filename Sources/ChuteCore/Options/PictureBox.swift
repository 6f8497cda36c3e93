/// The box a rule sets for a picture: `width` and `height` as they are, and `shortSide` and `longSide`, which bound
/// one of them once the picture's shape, as it is shown, is known.
package struct PictureBox: Sendable, Equatable {
    package var width: Int?
    package var height: Int?
    package var shortSide: Int?
    package var longSide: Int?

    /// The box of a rule's `width`, `height`, `shortSide` and `longSide`.
    package init(_ options: ConversionOptions) {
        self.width = options[CommonOptions.width]
        self.height = options[CommonOptions.height]
        self.shortSide = options[CommonOptions.shortSide]
        self.longSide = options[CommonOptions.longSide]
    }

    /// Whether the rule bounds no side.
    package var isEmpty: Bool {
        self.width == nil && self.height == nil && self.shortSide == nil && self.longSide == nil
    }

    /// The largest width and height for a picture shown `size`: `shortSide` and `longSide` put on the side they mean
    /// for this picture (the short side of a portrait picture is its width), the smaller limit winning where two
    /// bound one side. A square's sides are both short and long.
    package func limits(for size: (width: Int, height: Int)) -> (width: Int?, height: Int?) {
        let portrait = size.height > size.width
        let square = size.width == size.height
        let short = self.shortSide
        let long = self.longSide
        let widthLimits = [self.width, portrait || square ? short : long, square ? long : nil]
        let heightLimits = [self.height, portrait ? long : short, square ? long : nil]
        return (widthLimits.compactMap { $0 }.min(), heightLimits.compactMap { $0 }.min())
    }
}
