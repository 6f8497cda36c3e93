import ChuteCore
import Foundation

/// The options of the image engine (besides ``CommonOptions``).
package enum ImageOptions {
    /// `quality`: the lossy encoders' quality, as a fraction or a percentage.
    package static let quality = RuleOption<Double>(
        "quality",
        .number(
            NumberRange(
                above: 0,
                upTo: 100,
                wording: "a fraction (0 < q <= 1) or a percentage (1 < q <= 100)"
            )
        ),
        summary: "Lossy encoder quality: a fraction, 0 < q ≤ 1 (`0.85`), or a percentage, 1 < q ≤ 100 (`85`). "
            + "Lossless formats ignore it.",
        default: "`0.85`",
        stage: .encode,
        show: { "quality \(ImageOptions.percent(ImageOptions.fraction(quality: $0)))" }
    )

    /// `rawFormat`: the samples of a headerless raw input.
    package static let rawFormat: RuleOption<RawPixelLayout.Samples> = RuleOption(
        "rawFormat",
        .choice(RawPixelLayout.Samples.allCases.map(\.rawValue)),
        summary: "Read every input of the rule as headerless raw pixels: `rgb` (interleaved R G B) or `yuv` (planar "
            + "4:2:0, even sizes only). Needs `rawSize`. The file must be exactly the size the layout takes.",
        stage: .decode,
        check: { _, context in
            guard context.options[ImageOptions.rawSize] != nil else {
                return OptionProblem("'rawFormat' needs 'rawSize', the raw image's width and height", at: .key)
            }
            do throws(RawPixelLayout.Problem) {
                _ = try ImageOptions.rawLayout(in: context.options)
                return nil
            } catch {
                return OptionProblem(error.description)
            }
        },
        show: { "raw \($0.rawValue) input" }
    )

    /// `rawSize`: the width and height of a raw input.
    package static let rawSize: RuleOption<String> = RuleOption(
        "rawSize",
        .text(
            TextSyntax(name: "a size such as 640x480", pattern: "^[0-9]+x[0-9]+$") { text in
                ImageOptions.size(text) == nil ? "expected WIDTHxHEIGHT, such as 640x480" : nil
            }
        ),
        summary: "The width and height of a raw input, `WIDTHxHEIGHT`. Only with `rawFormat`.",
        stage: .decode,
        check: { _, context in
            context.options[ImageOptions.rawFormat] == nil
                ? OptionProblem("'rawSize' is only used with 'rawFormat'", at: .key) : nil
        },
        show: { "raw size \($0)" }
    )

    /// `rawDepth`: the bits per sample of a raw input.
    package static let rawDepth: RuleOption<Int> = RuleOption(
        "rawDepth",
        .integer(8...16),
        summary: "Bits per sample of a raw input, 8 or 16 (most significant byte first). Only with `rawFormat`.",
        default: "`8`",
        stage: .decode,
        check: { depth, context in
            if context.options[ImageOptions.rawFormat] == nil {
                return OptionProblem("'rawDepth' is only used with 'rawFormat'", at: .key)
            }
            return RawPixelLayout.depths.contains(depth)
                ? nil : OptionProblem("'rawDepth' must be 8 or 16, found \(depth)")
        },
        show: { "raw depth \($0)" }
    )

    /// `tiles`: cut the picture into a grid, each tile its own output.
    package static let tiles: RuleOption<String> = RuleOption(
        "tiles",
        .text(
            TextSyntax(name: "a grid COLUMNSxROWS such as 3x3", pattern: "^[0-9]+x[0-9]+$") { text in
                TileGrid(text) == nil
                    ? "expected COLUMNSxROWS, such as 3x3 (3 columns, 3 rows), with 2 to \(TileGrid.maximumTiles) tiles"
                    : nil
            }
        ),
        summary: "Cut the picture into COLUMNSxROWS tiles (`3x3`: 3 columns, 3 rows, as ImageMagick's `-crop 3x3@`), "
            + "each its own output `{stem}-r1c1.{ext}` … `{stem}-r3c3.{ext}` (row, then column); tiles differ by at "
            + "most a pixel, the later ones taking the remainder. At most \(TileGrid.maximumTiles) tiles. All of them "
            + "are put in place, or none, and one sidecar (`{stem}.{ext}.chute.json`) lists them. With `groupBy: "
            + "folder` the reverse: the folder's images laid on one contact sheet of COLUMNSxROWS cells, row by row.",
        stage: .tile,
        show: { "\($0) tiles (columns x rows)" }
    )

    /// The raw layout a rule declares, or `nil` when it reads inputs by their content.
    ///
    /// - Throws: ``RawPixelLayout/Problem`` when the declared layout is unusable (odd YUV sizes, a depth other than 8
    ///   or 16); the rules reader has refused such a rule already.
    package static func rawLayout(in options: ConversionOptions) throws(RawPixelLayout.Problem) -> RawPixelLayout? {
        guard let samples = options[Self.rawFormat] else { return nil }
        guard let size = options[Self.rawSize].flatMap(Self.size) else {
            throw RawPixelLayout.Problem(description: "a raw input needs 'rawSize'")
        }
        return try RawPixelLayout(
            samples: samples,
            width: size.width,
            height: size.height,
            depth: options[Self.rawDepth] ?? 8
        )
    }

    /// `640x480` as a width and a height.
    private static func size(_ text: String) -> (width: Int, height: Int)? {
        let parts = text.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]), width > 0, height > 0 else {
            return nil
        }
        return (width, height)
    }

    /// `crop`: keep a box of the image, or its largest box of a ratio.
    package static let crop = CommonOptions.crop

    /// `gravity`: where `crop` and `aspectMode: crop` place their box.
    package static let gravity = CommonOptions.gravity

    /// `rotate`: turn the image clockwise.
    package static let rotate = CommonOptions.rotate

    /// `flip`: mirror top to bottom.
    package static let flip = CommonOptions.flip

    /// `grayscale`: write the picture in shades of grey.
    package static let grayscale = RuleOption<Bool>(
        "grayscale",
        .flag,
        summary: "Write the picture in shades of grey (one channel where the format allows it), after every other "
            + "operation, the watermark included.",
        default: "`false`",
        stage: .encode,
        show: { $0 ? "grayscale" : "in colour" }
    )

    /// `colorspace`: whether pictures in print colours (CMYK) become sRGB.
    package static let colorspace = RuleOption<ColorspacePolicy>(
        "colorspace",
        .choice(ColorspacePolicy.allCases.map(\.rawValue)),
        summary: "`srgb` turns pictures in print colours (CMYK, from a JPEG, TIFF, PSD, …) into sRGB right after "
            + "decoding, through their ICC profile (or Ghostscript's default CMYK profile when they have none), so "
            + "that browsers and NAS thumbnailers show them right; RGB pictures keep their own profile (Display P3, "
            + "Adobe RGB) and grey stays grey. `keep` writes the colours as decoded, CMYK into targets that hold it "
            + "(JPEG, TIFF).",
        default: "`srgb`",
        stage: .orient,
        show: { "colorspace \($0.rawValue)" }
    )

    /// `flop`: mirror left to right.
    package static let flop = CommonOptions.flop

    /// `background`: the colour of what `rotate` and `aspect` add.
    package static let background = CommonOptions.background

    /// `aspect`: give the image a ratio.
    package static let aspect = CommonOptions.aspect

    /// `aspectMode`: how `aspect` reaches its ratio.
    package static let aspectMode = CommonOptions.aspectMode

    /// `watermark`: a line of text laid on the image (shared with the PDF engine).
    package static let watermark = CommonOptions.watermark

    /// `watermarkImage`: an image file laid on the image.
    package static let watermarkImage = RuleOption<String>(
        "watermarkImage",
        .text(
            TextSyntax(name: "an absolute path to an image file", pattern: "^/") { path in
                path.hasPrefix("/") ? nil : "the path must be absolute, such as /srv/chute/logo.png"
            }
        ),
        summary: "Lay this image file (a PNG with transparency is best) on the image, or on every page of a PDF (as "
            + "page content, its transparency kept, under none of the page's text), `watermarkSize` wide, placed by "
            + "`watermarkPosition`, at `watermarkOpacity`. The worker reads it at each job; a missing file is an "
            + "error of the rules file.",
        stage: .watermark,
        check: { path, _ in
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                FileManager.default.isReadableFile(atPath: path)
            else { return OptionProblem("no readable file at '\(path)' for 'watermarkImage'") }
            return nil
        },
        show: { "watermark image \($0)" }
    )

    /// `watermarkPosition`: where the watermark goes.
    package static let watermarkPosition = CommonOptions.watermarkPosition

    /// `watermarkOpacity`: how opaque the watermark is.
    package static let watermarkOpacity = CommonOptions.watermarkOpacity

    /// `watermarkSize`: the watermark's width relative to the image's.
    package static let watermarkSize = CommonOptions.watermarkSize

    /// `frameDelay`: how long each image of a group shows in its animation.
    package static let frameDelay = RuleOption<String>(
        "frameDelay",
        .text(
            TextSyntax(name: "a duration such as `0.5s` or `200ms`") { text in
                guard let delay = ValueParsing.duration(text) else { return "a duration is a number and ms or s" }
                return delay < .milliseconds(10) || delay > .seconds(60) ? "a frame shows for 10ms to 60s" : nil
            }
        ),
        summary: "With `groupBy: folder`, to `gif` or `webp`: the images of the folder become one looping animation, "
            + "one frame each in natural name order, each shown this long (in hundredths of a second). Frames are "
            + "the first image's size (bounded by `width` and `height`); the others are fitted into it, centred on "
            + "`background`.",
        default: "`0.5s`",
        stage: .encode,
        formats: ["gif", "webp"],
        show: { "each frame \($0)" }
    )

    /// A frame's delay when the rule gives no `frameDelay`, in hundredths of a second.
    package static let defaultFrameDelay = 50

    /// The image types Chute decodes, each with the only ImageMagick coder allowed to read it (`docs/formats.md`
    /// lists them; a test holds the two together).
    package static let decoders: [MediaType: String] = [
        .jpeg: "JPEG", .png: "PNG", .gif: "GIF", .webp: "WEBP", .heif: "HEIC", .avif: "AVIF", .tiff: "TIFF",
        .bmp: "BMP", .jpeg2000: "JP2", .openexr: "EXR", .netpbm: "PNM", .tga: "TGA", .psd: "PSD", .ico: "ICO",
        .radiance: "HDR", .sgi: "SGI", .sunraster: "SUN", .xwd: "XWD",
    ]
    /// The formats whose group becomes one animation, each image a frame (without `tiles`).
    package static let animatedFormats: Set<String> = ["gif", "webp"]

    /// The image engine's ``EngineDescriptor/joinsGroups``: a group becomes a contact sheet with `tiles`, else an
    /// animation, which only GIF and WebP hold.
    @Sendable package static func checkGroup(_ format: TargetFormat, _ options: ConversionOptions) -> String? {
        guard options[Self.tiles] == nil, !Self.animatedFormats.contains(format.name) else { return nil }
        return "images joined into one \(format.name) (groupBy) make a contact sheet, which needs 'tiles' "
            + "(COLUMNSxROWS, such as 4x3); only gif and webp make an animation without it"
    }

    /// The quality as a fraction in (0, 1], whichever way it was written.
    package static func fraction(quality: Double) -> Double {
        quality > 1 ? quality / 100 : quality
    }

    /// `0.85` → `85%`, `0.855` → `85.5%`.
    private static func percent(_ fraction: Double) -> String {
        let tenths = Int((fraction * 1000).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
    }
}

/// What `colorspace` does with pictures in print colours.
package enum ColorspacePolicy: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    /// Into sRGB, through ICC profiles.
    case srgb
    /// As decoded.
    case keep
}

extension EngineKind {
    /// The image engine's lane.
    package static let image = EngineKind(rawValue: "image")
}

extension Engines {
    /// What the image engine writes and takes: its formats, then `same` (see ``same(writing:)``).
    package static let image: EngineDescriptor = {
        var descriptor = Self.writers
        descriptor.formats.append(Self.same(writing: descriptor.formats))
        return descriptor
    }()

    /// `to: same`, which keeps each file's own format: each input type is written in the format whose coder is the
    /// type's decoder (a JPEG as `jpg`, a HEIF as `heic`); the types of no such format are not written.
    private static func same(writing formats: [TargetFormat]) -> TargetFormat {
        var written: [MediaType: TargetFormat] = [:]
        for (type, coder) in ImageOptions.decoders {
            if let format = formats.first(where: { $0.coder == coder }) {
                written[type] = format
            }
        }
        return TargetFormat(name: "same", category: .image, engine: .image, coder: "", sameAsInput: written)
    }

    /// The formats the image engine writes, and its options.
    private static let writers = EngineDescriptor(
        kind: .image,
        library: "ImageMagick 6 (MagickWand), libheif",
        reads: [.image],
        concurrency: .perCore,
        formats: [
            TargetFormat(name: "jpg", aliases: ["jpeg"], category: .image, engine: .image, coder: "JPEG"),
            TargetFormat(name: "png", category: .image, engine: .image, coder: "PNG"),
            TargetFormat(name: "webp", category: .image, engine: .image, coder: "WEBP", holdsSeveralFrames: true),
            TargetFormat(name: "heic", aliases: ["heif"], category: .image, engine: .image, coder: "HEIC"),
            TargetFormat(
                name: "tiff",
                aliases: ["tif"],
                category: .image,
                engine: .image,
                coder: "TIFF",
                holdsSeveralFrames: true
            ),
            TargetFormat(name: "gif", category: .image, engine: .image, coder: "GIF", holdsSeveralFrames: true),
            TargetFormat(name: "bmp", category: .image, engine: .image, coder: "BMP"),
            TargetFormat(name: "avif", category: .image, engine: .image, coder: "AVIF"),
            TargetFormat(name: "jp2", aliases: ["jpeg2000"], category: .image, engine: .image, coder: "JP2"),
            TargetFormat(name: "tga", aliases: ["targa"], category: .image, engine: .image, coder: "TGA"),
            TargetFormat(name: "exr", aliases: ["openexr"], category: .image, engine: .image, coder: "EXR"),
            TargetFormat(name: "pbm", category: .image, engine: .image, coder: "PBM"),
            TargetFormat(name: "pgm", category: .image, engine: .image, coder: "PGM"),
            TargetFormat(name: "ppm", category: .image, engine: .image, coder: "PPM"),
            TargetFormat(name: "pam", category: .image, engine: .image, coder: "PAM"),
            TargetFormat(name: "pfm", category: .image, engine: .image, coder: "PFM"),
            TargetFormat(name: "sgi", aliases: ["iris"], category: .image, engine: .image, coder: "SGI"),
            TargetFormat(name: "ras", aliases: ["sun", "sunras"], category: .image, engine: .image, coder: "SUN"),
            TargetFormat(name: "xwd", category: .image, engine: .image, coder: "XWD"),
            TargetFormat(name: "rgb", category: .image, engine: .image, coder: "RGB"),
            TargetFormat(name: "yuv", category: .image, engine: .image, coder: "YUV"),
        ],
        options: [
            ImageOptions.quality.spec, CommonOptions.width.spec, CommonOptions.height.spec,
            CommonOptions.shortSide.spec, CommonOptions.longSide.spec, ImageOptions.crop.spec,
            ImageOptions.gravity.spec, ImageOptions.rotate.spec, ImageOptions.flip.spec,
            ImageOptions.flop.spec, ImageOptions.background.spec, ImageOptions.aspect.spec,
            ImageOptions.aspectMode.spec, ImageOptions.watermark.spec, ImageOptions.watermarkImage.spec,
            ImageOptions.watermarkPosition.spec, ImageOptions.watermarkOpacity.spec, ImageOptions.watermarkSize.spec,
            ImageOptions.grayscale.spec, ImageOptions.colorspace.spec, CommonOptions.maxFileSize.spec,
            CommonOptions.metadata.spec,
            CommonOptions.strip.spec,
            ImageOptions.rawFormat.spec, ImageOptions.rawSize.spec, ImageOptions.rawDepth.spec,
            ImageOptions.tiles.spec, ImageOptions.frameDelay.spec,
        ],
        joinsGroups: ImageOptions.checkGroup,
        worker: "chute-image-worker"
    )
}
