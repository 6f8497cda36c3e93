/// Where a box smaller than the image sits when the rule gives no offsets: `gravity`, and the position of a
/// watermark.
package enum Gravity: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case center, north, south, east, west, northeast, northwest, southeast, southwest

    /// The offset of a box that leaves `free` pixels beside it along one axis: 0 at the start (west, north),
    /// `free` at the end (east, south), half of it in the middle.
    private static func offset(free: Int, start: Bool, end: Bool) -> Int {
        start ? 0 : end ? free : free / 2
    }

    /// The top-left corner of a `width` × `height` box placed in an image of `imageWidth` × `imageHeight`.
    package func origin(width: Int, height: Int, imageWidth: Int, imageHeight: Int) -> (x: Int, y: Int) {
        let name = self.rawValue
        let x = Self.offset(free: imageWidth - width, start: name.hasSuffix("west"), end: name.hasSuffix("east"))
        let y = Self.offset(free: imageHeight - height, start: name.hasPrefix("north"), end: name.hasPrefix("south"))
        return (x, y)
    }
}

/// A width to height ratio such as `16:9` or `1.91:1`, as `crop` and `aspect` take it.
package struct AspectRatio: Equatable {
    package var width: Double
    package var height: Double

    /// Reads `W:H`, two positive numbers; `nil` when the text is not one.
    package init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Self.number(parts[0]), let height = Self.number(parts[1]) else {
            return nil
        }
        self.width = width
        self.height = height
    }

    /// A positive number written with digits and at most one point, no sign or exponent.
    package static func number(_ text: Substring) -> Double? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
            let value = Double(text), value.isFinite, value > 0
        else { return nil }
        return value
    }

    /// The largest box of this ratio inside `width` × `height`, at least 1 × 1.
    package func largestBox(inWidth width: Int, height: Int) -> (width: Int, height: Int) {
        let ratio = self.width / self.height
        if Double(width) / Double(height) > ratio {
            return (max(1, min(width, Int((Double(height) * ratio).rounded()))), height)
        }
        return (width, max(1, min(height, Int((Double(width) / ratio).rounded()))))
    }

    /// The smallest box of this ratio that holds `width` × `height`.
    package func smallestBox(holdingWidth width: Int, height: Int) -> (width: Int, height: Int) {
        let ratio = self.width / self.height
        if Double(width) / Double(height) > ratio {
            return (width, max(height, Int((Double(width) / ratio).rounded())))
        }
        return (max(width, Int((Double(height) * ratio).rounded())), height)
    }
}

/// What `crop` keeps of an image: a box, in pixels or percentages of the image, or the largest box of a ratio.
///
/// The grammar (documented in docs/rules.md):
/// - `WxH+X+Y`: a box `W` wide and `H` high whose top-left corner is `X` pixels from the left and `Y` from the top.
///   Each of the four is a whole number of pixels or a percentage (`50%`) of the image's width (`W`, `X`) or height
///   (`H`, `Y`). Without `+X+Y`, `gravity` places the box (centred by default).
/// - `W:H`: the largest box of that ratio (`16:9`, `1:1`, `1.91:1`), placed by `gravity`.
///
/// A box that does not lie wholly inside the image fails the job rather than give an output of another size than
/// the rule asked for.
package enum CropGeometry: Equatable {
    /// A length along one axis.
    package enum Length: Equatable {
        case pixels(Int)
        case percent(Double)

        /// The length in pixels of an axis `size` long.
        package func pixels(of size: Int) -> Int {
            switch self {
            case .pixels(let pixels): pixels
            case .percent(let percent): Int((Double(size) * percent / 100).rounded())
            }
        }

        /// `800`, `50%` or `12.5%`; `nil` otherwise. A size must be more than 0; an offset may be 0.
        package init?(_ text: Substring, isSize: Bool) {
            if text.hasSuffix("%") {
                let number = text.dropLast()
                guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                    let percent = Double(number), percent.isFinite, percent <= 100, !isSize || percent > 0
                else { return nil }
                self = .percent(percent)
            } else {
                guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }),
                    let pixels = Int(text), !isSize || pixels > 0
                else { return nil }
                self = .pixels(pixels)
            }
        }
    }

    /// Where a box's top-left corner is.
    package struct Offset: Equatable {
        package var x: Length
        package var y: Length

        package init(x: Length, y: Length) {
            self.x = x
            self.y = y
        }
    }

    /// A box; `offset` `nil` means placed by gravity.
    case box(width: Length, height: Length, offset: Offset?)
    /// The largest box of a ratio, placed by gravity.
    case ratio(AspectRatio)

    /// What a well-formed value looks like, for messages and the docs.
    package static let grammarName = "a box `WxH+X+Y` (pixels or `%`, offsets optional) or a ratio `W:H`"
    /// The grammar as a regular expression, for editors (the JSON Schema).
    package static let pattern =
        #"^([0-9]+(\.[0-9]+)?%?x[0-9]+(\.[0-9]+)?%?(\+[0-9]+(\.[0-9]+)?%?\+[0-9]+(\.[0-9]+)?%?)?|[0-9.]+:[0-9.]+)$"#

    /// Reads a `crop` value.
    ///
    /// - Throws: ``Problem`` saying what is wrong, for the rules reader.
    package init(parsing text: String) throws(CropGeometry.Problem) {
        if text.contains(":") {
            guard let ratio = AspectRatio(text) else {
                throw Problem("a ratio is two positive numbers such as 16:9")
            }
            self = .ratio(ratio)
            return
        }
        let parts = text.split(separator: "+", omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 3 else {
            throw Problem("expected WxH or WxH+X+Y, such as 800x600+10+20 or 50%x50%")
        }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = Length(size[0], isSize: true), let height = Length(size[1], isSize: true)
        else {
            throw Problem("the size must be WxH, each a whole number of pixels above 0 or a percentage up to 100%")
        }
        var offset: Offset?
        if parts.count == 3 {
            guard let x = Length(parts[1], isSize: false), let y = Length(parts[2], isSize: false) else {
                throw Problem("the offsets must be +X+Y, each a whole number of pixels or a percentage")
            }
            offset = Offset(x: x, y: y)
        }
        self = .box(width: width, height: height, offset: offset)
    }

    /// Why a `crop` value is not well formed, or does not fit an image.
    package struct Problem: Error {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    /// Whether the crop's position comes from `gravity`.
    package var usesGravity: Bool {
        switch self {
        case .box(_, _, let offset): offset == nil
        case .ratio: true
        }
    }

    /// The box to keep of a `width` × `height` image.
    ///
    /// - Returns: the box, or a message when it does not lie wholly inside the image.
    package func rectangle(
        inWidth width: Int,
        height: Int,
        gravity: Gravity
    ) -> Result<(width: Int, height: Int, x: Int, y: Int), CropGeometry.Problem> {
        let size: (width: Int, height: Int)
        var origin: (x: Int, y: Int)?
        switch self {
        case .ratio(let ratio):
            size = ratio.largestBox(inWidth: width, height: height)
        case .box(let boxWidth, let boxHeight, let offset):
            size = (max(1, boxWidth.pixels(of: width)), max(1, boxHeight.pixels(of: height)))
            if let offset {
                origin = (offset.x.pixels(of: width), offset.y.pixels(of: height))
            }
        }
        let corner =
            origin
            ?? gravity.origin(
                width: size.width,
                height: size.height,
                imageWidth: width,
                imageHeight: height
            )
        guard corner.x >= 0, corner.y >= 0, corner.x + size.width <= width, corner.y + size.height <= height else {
            return .failure(
                Problem(
                    "the crop box \(size.width)x\(size.height)+\(max(0, corner.x))+\(max(0, corner.y)) does not lie "
                        + "inside the \(width)x\(height) image"
                )
            )
        }
        return .success((size.width, size.height, corner.x, corner.y))
    }
}
