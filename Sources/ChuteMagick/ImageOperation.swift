import ChuteCore
import ChuteMetadata

/// One step of an image conversion, applied to every frame. ``plan(_:format:)`` turns a rule's options into steps in
/// the order of ``OperationStage`` (orient → crop → rotate/flip → resize → pad/aspect → watermark → metadata →
/// encode), whatever order the rule wrote its keys in; a new image option is a new case here and its step in
/// ``apply(to:)``.
enum ImageOperation: Equatable {
    /// Turn the pixels as the EXIF orientation says, and mark the image top-left; `exif` is an orientation that
    /// ImageMagick does not read itself (a PNG's or WebP's EXIF), set first.
    case orient(exif: Int?)
    /// Shrink to fit the box, keeping the aspect ratio; never enlarge.
    case fit(width: Int?, height: Int?)
    /// Remove metadata as the policy says (`strip`: all but the ICC profile; `location`: only location).
    case metadata(MetadataPolicy)
    /// Flatten transparency onto a colour, for targets without alpha.
    case flatten(onto: String)
    /// The lossy encoder's quality, 1–100.
    case quality(Int)
    /// The bits per sample of an output with no header to say it (raw RGB and YUV).
    case depth(Int)

    /// Where the step belongs.
    var stage: OperationStage {
        switch self {
        case .orient: .orient
        case .fit: .resize
        case .metadata: .metadata
        case .flatten, .quality, .depth: .encode
        }
    }

    /// The targets whose encoders take a quality setting (JPEG 2000 is lossless only at quality 100).
    private static let lossyTargets: Set<String> = ["jpg", "webp", "heic", "avif", "jp2"]
    /// The targets that cannot hold an alpha channel: their images are flattened onto white first, as a viewer
    /// would show them, rather than keeping whatever colour lies under transparent pixels. (ImageMagick 6's HEIC
    /// coder writes no alpha plane, for AVIF either.)
    private static let opaqueTargets: Set<String> = [
        "jpg", "heic", "avif", "pbm", "pgm", "ppm", "pfm", "xwd", "rgb", "yuv",
    ]
    /// The quality of lossy outputs when the rule sets none.
    static let defaultQuality = 0.85

    /// The steps for a rule's options and target, in stage order.
    ///
    /// - Parameters:
    ///   - policy: what happens to the metadata (from `metadata`, or `strip`).
    ///   - orientation: an EXIF orientation ImageMagick does not read itself, to apply.
    static func plan(
        _ options: ConversionOptions,
        format: TargetFormat,
        metadata policy: MetadataPolicy,
        orientation: Int? = nil
    ) -> [ImageOperation] {
        var steps: [ImageOperation] = [.orient(exif: orientation)]
        let (width, height) = (options[CommonOptions.width], options[CommonOptions.height])
        if width != nil || height != nil {
            steps.append(.fit(width: width, height: height))
        }
        if policy != .keep {
            steps.append(.metadata(policy))
        }
        if Self.opaqueTargets.contains(format.name) {
            steps.append(.flatten(onto: "white"))
        }
        if RawPixelLayout.Samples.allCases.contains(where: { $0.coder == format.coder }) {
            steps.append(.depth(ImageEngine.rawOutputDepth))
        }
        if Self.lossyTargets.contains(format.name) {
            let fraction = options[ImageOptions.quality].map(ImageOptions.fraction(quality:)) ?? Self.defaultQuality
            steps.append(.quality(min(100, max(1, Int((fraction * 100).rounded())))))
        }
        // A stable sort: steps of one stage keep the order above.
        return steps.enumerated().sorted { ($0.element.stage, $0.offset) < ($1.element.stage, $1.offset) }
            .map(\.element)
    }

    /// Applies the step to the wand's current frame.
    ///
    /// - Returns: the kinds of metadata the step removed (only a ``metadata(_:)`` step removes any).
    func apply(to images: borrowing Wand) throws(MagickError) -> Set<MetadataKind> {
        switch self {
        case .orient(let exif):
            if let exif {
                try images.setOrientation(exif)
            }
            try images.autoOrient()
        case .fit(let width, let height):
            if let size = Self.fittedSize(width: images.width, height: images.height, box: (width, height)) {
                try images.resize(width: size.width, height: size.height)
            }
        case .metadata(.keep):
            break
        case .metadata(.strip):
            return try ImageEngine.strip(images)
        case .metadata(.location):
            return try ImageEngine.removeLocation(from: images)
        case .flatten(let color):
            if images.hasAlpha {
                try images.removeAlpha(onto: PixelColor(named: color))
            }
        case .quality(let quality):
            try images.setQuality(quality)
        case .depth(let depth):
            try images.setDepth(depth)
        }
        return []
    }

    /// The size that fits `width` × `height` into the box, keeping the aspect ratio, or `nil` when the image already
    /// fits (images are never upscaled).
    static func fittedSize(width: Int, height: Int, box: (width: Int?, height: Int?)) -> (width: Int, height: Int)? {
        var scale = 1.0
        if let maximum = box.width, maximum < width {
            scale = min(scale, Double(maximum) / Double(width))
        }
        if let maximum = box.height, maximum < height {
            scale = min(scale, Double(maximum) / Double(height))
        }
        guard scale < 1 else { return nil }
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }
}
