/// A colour a rule gives, as `background` takes it: a name from a short list, `transparent`, or hexadecimal
/// `#rgb`, `#rrggbb` or `#rrggbbaa`. Every value this accepts is one ImageMagick knows.
package struct ImageColor: Equatable {
    /// The colour as ImageMagick reads it (lower-case).
    package var name: String

    /// The names accepted besides hexadecimal.
    package static let names: Set<String> = [
        "white", "black", "gray", "grey", "red", "green", "blue", "yellow", "orange", "purple", "pink", "brown",
        "cyan", "magenta", "silver", "navy", "transparent", "none",
    ]
    /// What a well-formed value looks like, for messages and the docs.
    package static let grammarName = "a colour: `white`, `black`, … , `transparent`, `#rrggbb` or `#rrggbbaa`"
    /// The grammar as a regular expression, for editors (the JSON Schema).
    package static let pattern =
        "^(#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})|" + names.sorted().joined(separator: "|") + ")$"

    package static let white = ImageColor(validName: "white")
    package static let transparent = ImageColor(validName: "transparent")

    private init(validName: String) {
        self.name = validName
    }

    /// Reads a colour, case-insensitively; `nil` when it is not one of the forms above.
    package init?(_ text: String) {
        let lower = text.lowercased()
        if lower.hasPrefix("#") {
            let digits = lower.dropFirst()
            guard [3, 6, 8].contains(digits.count), digits.allSatisfy(\.isHexDigit) else { return nil }
        } else {
            guard Self.names.contains(lower) else { return nil }
        }
        self.name = lower
    }

    /// Whether the colour covers what is behind it: not `transparent`/`none`, and no alpha below `ff`.
    package var isOpaque: Bool {
        if self.name == "transparent" || self.name == "none" { return false }
        return !(self.name.hasPrefix("#") && self.name.count == 9 && !self.name.hasSuffix("ff"))
    }

    /// Whether the target's outputs keep transparency (every one the image engine does not flatten, see
    /// ``ImageOperation/opaqueTargets``, except BMP, whose alpha few viewers show); others, and `to: same`, which may
    /// become either, get an opaque default background.
    package static func keepsTransparency(_ format: TargetFormat) -> Bool {
        format.category == .image && !format.followsInput && format.name != "bmp"
            && !Self.opaqueImageTargets.contains(format.name)
    }

    /// The image targets that cannot hold an alpha channel: their images are flattened onto white first, as a viewer
    /// would show them, rather than keeping whatever colour lies under transparent pixels. (ImageMagick 6's HEIC
    /// coder writes no alpha plane, for AVIF either.) Video targets hold no alpha either.
    package static let opaqueImageTargets: Set<String> = [
        "jpg", "heic", "avif", "pbm", "pgm", "ppm", "pfm", "xwd", "rgb", "yuv",
    ]

    /// The colour as FFmpeg's colour syntax takes it (`av_parse_color`): a name, or `0xRRGGBB[AA]`.
    package var ffmpegName: String {
        guard self.name.hasPrefix("#") else { return self.name }
        let digits = self.name.dropFirst()
        // `#abc` is `#aabbcc`, which FFmpeg does not abbreviate.
        return "0x" + (digits.count == 3 ? digits.map { "\($0)\($0)" }.joined() : String(digits))
    }
}
