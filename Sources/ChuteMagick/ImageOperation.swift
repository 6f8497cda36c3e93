import ChuteCatalog
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
    /// Turn pictures in print colours (CMYK) into sRGB through ICC profiles, and any other colour space but RGB
    /// and grey (Lab, …) into sRGB (``ColorspacePolicy/srgb``).
    case makeSRGB
    /// Keep a box of the image.
    case crop(CropGeometry, gravity: Gravity)
    /// Turn clockwise by degrees, filling uncovered corners with a colour.
    case rotate(degrees: Double, background: ImageColor)
    /// Mirror top to bottom.
    case flip
    /// Mirror left to right.
    case flop
    /// Shrink to fit the box, keeping the aspect ratio; never enlarge. `shortSide` and `longSide` bound the sides
    /// they mean for the picture as it is then, upright.
    case fit(PictureBox)
    /// Add bands of a colour on two sides, centring the image, to reach a ratio.
    case pad(AspectRatio, background: ImageColor)
    /// Keep the largest box of a ratio, placed by gravity.
    case cropToRatio(AspectRatio, gravity: Gravity)
    /// Lay a mark on the image.
    case watermark(Watermark)
    /// Remove metadata as the policy says (`strip`: all but the ICC profile; `location`: only location).
    case metadata(MetadataPolicy)
    /// Turn the picture into shades of grey.
    case grayscale
    /// Flatten transparency onto a colour, for targets without alpha.
    case flatten(onto: String)
    /// The lossy encoder's quality, 1–100.
    case quality(Int)
    /// The bits per sample of an output with no header to say it (raw RGB and YUV).
    case depth(Int)

    /// Where the step belongs.
    var stage: OperationStage {
        switch self {
        case .orient, .makeSRGB: .orient
        case .crop: .crop
        case .rotate, .flip, .flop: .rotate
        case .fit: .resize
        case .pad, .cropToRatio: .pad
        case .watermark: .watermark
        case .metadata: .metadata
        case .grayscale, .flatten, .quality, .depth: .encode
        }
    }

    /// The targets whose encoders take a quality setting (JPEG 2000 is lossless only at quality 100).
    static let lossyTargets: Set<String> = ["jpg", "webp", "heic", "avif", "jp2"]
    /// The targets that cannot hold an alpha channel (``ImageColor/opaqueImageTargets``).
    static let opaqueTargets = ImageColor.opaqueImageTargets
    /// The quality of lossy outputs when the rule sets none.
    static let defaultQuality = 0.85

    /// The rule's quality, or the default, from 1 to 100.
    static func quality(_ options: ConversionOptions) -> Int {
        let fraction = options[ImageOptions.quality].map(ImageOptions.fraction(quality:)) ?? Self.defaultQuality
        return min(100, max(1, Int((fraction * 100).rounded())))
    }

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
        if options[ImageOptions.colorspace] != .keep {
            steps.append(.makeSRGB)
        }
        if let text = options[ImageOptions.crop], let crop = try? CropGeometry(parsing: text) {
            steps.append(.crop(crop, gravity: options[ImageOptions.gravity] ?? .center))
        }
        if let degrees = options[ImageOptions.rotate], degrees.truncatingRemainder(dividingBy: 360) != 0 {
            steps.append(.rotate(degrees: degrees, background: Self.background(options, format: format)))
        }
        if options[ImageOptions.flip] == true {
            steps.append(.flip)
        }
        if options[ImageOptions.flop] == true {
            steps.append(.flop)
        }
        let box = PictureBox(options)
        if !box.isEmpty {
            steps.append(.fit(box))
        }
        if let ratio = options[ImageOptions.aspect].flatMap(AspectRatio.init) {
            steps.append(
                options[ImageOptions.aspectMode] == .crop
                    ? .cropToRatio(ratio, gravity: options[ImageOptions.gravity] ?? .center)
                    : .pad(ratio, background: Self.background(options, format: format))
            )
        }
        let mark =
            options[ImageOptions.watermark].map(Watermark.Content.text)
            ?? options[ImageOptions.watermarkImage].map(Watermark.Content.image(path:))
        if let mark {
            let watermark = Watermark(
                content: mark,
                position: options[ImageOptions.watermarkPosition] ?? .southeast,
                opacity: options[ImageOptions.watermarkOpacity] ?? 0.5,
                size: options[ImageOptions.watermarkSize] ?? 0.25
            )
            steps.append(.watermark(watermark))
        }
        if policy != .keep {
            steps.append(.metadata(policy))
        }
        if options[ImageOptions.grayscale] == true {
            steps.append(.grayscale)
        }
        if Self.opaqueTargets.contains(format.name) {
            steps.append(.flatten(onto: "white"))
        }
        if RawPixelLayout.Samples.allCases.contains(where: { $0.coder == format.coder }) {
            steps.append(.depth(ImageEngine.rawOutputDepth))
        }
        if Self.lossyTargets.contains(format.name) {
            steps.append(.quality(Self.quality(options)))
        }
        // A stable sort: steps of one stage keep the order above.
        return steps.enumerated().sorted { ($0.element.stage, $0.offset) < ($1.element.stage, $1.offset) }
            .map(\.element)
    }

    /// The rule's `background`, or by default transparent for targets that keep transparency and white for others.
    private static func background(_ options: ConversionOptions, format: TargetFormat) -> ImageColor {
        options[ImageOptions.background].flatMap(ImageColor.init)
            ?? (ImageColor.keepsTransparency(format) ? .transparent : .white)
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
        case .makeSRGB:
            if images.isCMYK, let profiles = ColorProfiles.installed {
                try images.transformCMYK(defaultCMYK: profiles.cmyk, into: profiles.sRGB)
            } else if !images.isRGB, !images.isGray {
                try images.makeSRGB()
            }
        case .crop(let geometry, let gravity):
            switch geometry.rectangle(inWidth: images.width, height: images.height, gravity: gravity) {
            case .success(let box):
                try images.crop(width: box.width, height: box.height, x: box.x, y: box.y)
            case .failure(let problem):
                throw MagickError(code: .geometry, function: "crop", severity: 0, message: problem.message)
            }
        case .rotate(let degrees, let background):
            try images.rotate(degrees: degrees, background: background)
        case .flip:
            try images.flip()
        case .flop:
            try images.flop()
        case .fit(let box):
            let limits = box.limits(for: (images.width, images.height))
            if let size = Self.fittedSize(width: images.width, height: images.height, box: limits) {
                try images.resize(width: size.width, height: size.height)
            }
        case .pad(let ratio, let background):
            let (width, height) = ratio.smallestBox(holdingWidth: images.width, height: images.height)
            try images.extend(
                width: width,
                height: height,
                x: (width - images.width) / 2,
                y: (height - images.height) / 2,
                background: background
            )
        case .cropToRatio(let ratio, let gravity):
            let (width, height) = ratio.largestBox(inWidth: images.width, height: images.height)
            let (x, y) = gravity.origin(
                width: width,
                height: height,
                imageWidth: images.width,
                imageHeight: images.height
            )
            try images.crop(width: width, height: height, x: x, y: y)
        case .watermark(let watermark):
            try watermark.apply(to: images)
        case .metadata(.keep):
            break
        case .metadata(.strip):
            return try ImageEngine.strip(images)
        case .metadata(.location):
            return try ImageEngine.removeLocation(from: images)
        case .grayscale:
            try images.makeGray()
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
