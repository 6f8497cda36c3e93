import ChuteCore

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

    /// `strip`: remove the metadata that says where and who.
    package static let strip = RuleOption<Bool>(
        "strip",
        .flag,
        summary: "Remove EXIF, GPS, XMP and comments from the output (ICC colour profiles are kept). Without it, "
            + "EXIF (capture date, camera, GPS) and the ICC profile are kept, from HEIC and AVIF sources too.",
        default: "`false`",
        stage: .metadata,
        show: { $0 ? "strip metadata" : "keep metadata" }
    )

    /// `crop`: keep a box of the image, or its largest box of a ratio.
    package static let crop = RuleOption<String>(
        "crop",
        .text(
            TextSyntax(name: CropGeometry.grammarName, pattern: CropGeometry.pattern) { text in
                do throws(CropGeometry.Problem) {
                    _ = try CropGeometry(parsing: text)
                    return nil
                } catch {
                    return error.message
                }
            }
        ),
        summary: "Keep only this part of the (upright) image: a box `WxH+X+Y` in pixels or percentages of the "
            + "image (`800x600+10+20`, `50%x50%+25%+0`; without `+X+Y`, `gravity` places it), or the largest box of "
            + "a ratio (`16:9`), placed by `gravity`. A box not wholly inside the image fails the job.",
        stage: .crop,
        show: { "crop \($0)" }
    )

    /// `gravity`: where `crop` and `aspectMode: crop` place their box.
    package static let gravity = RuleOption<Gravity>(
        "gravity",
        .choice(Gravity.allCases.map(\.rawValue)),
        summary: "Where a `crop` without offsets, or a ratio, takes its box: `center`, or towards a side or corner "
            + "(`north` is the top edge, `southeast` the bottom right corner). Needs such a `crop`.",
        default: "`center`",
        stage: .crop,
        check: { _, context in
            let crop = context.options[ImageOptions.crop].flatMap { try? CropGeometry(parsing: $0) }
            guard crop?.usesGravity != true else { return nil }
            return OptionProblem("'gravity' places a crop box; it needs a 'crop' without +X+Y offsets", at: .key)
        },
        show: { "gravity \($0.rawValue)" }
    )

    /// The quality as a fraction in (0, 1], whichever way it was written.
    static func fraction(quality: Double) -> Double {
        quality > 1 ? quality / 100 : quality
    }

    /// `0.85` → `85%`, `0.855` → `85.5%`.
    private static func percent(_ fraction: Double) -> String {
        let tenths = Int((fraction * 1000).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10)%" : "\(tenths / 10).\(tenths % 10)%"
    }
}

extension ImageEngine {
    /// What the image engine writes and takes.
    package static let descriptor = EngineDescriptor(
        kind: .image,
        library: "ImageMagick 6 (MagickWand), libheif",
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
        ],
        options: [
            ImageOptions.quality.spec, CommonOptions.width.spec, CommonOptions.height.spec, ImageOptions.strip.spec,
            ImageOptions.crop.spec, ImageOptions.gravity.spec,
        ]
    )
}
