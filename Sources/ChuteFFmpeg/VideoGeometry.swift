import ChuteCore

/// What a rule does to a video's picture besides scaling it: `crop`, `rotate`, `flip`, `flop` and `aspect`, as
/// FFmpeg filters, in the order of ``OperationStage``: crop → rotate → flip → flop → (resize) → aspect.
struct VideoGeometry {
    let crop: CropGeometry?
    let gravity: Gravity
    /// The rule's clockwise turn, in 0..<360 and a multiple of 90 (the rules reader refuses other angles for video).
    let degrees: Int
    let flip: Bool
    let flop: Bool
    let aspect: AspectRatio?
    let aspectMode: AspectMode
    /// The colour of `aspect`'s bands, in FFmpeg's syntax.
    let background: String

    init(_ options: ConversionOptions) {
        self.crop = options[CommonOptions.crop].flatMap { try? CropGeometry(parsing: $0) }
        self.gravity = options[CommonOptions.gravity] ?? .center
        let quarterTurns = Int(((options[CommonOptions.rotate] ?? 0) / 90).rounded())
        self.degrees = ((quarterTurns % 4) + 4) % 4 * 90
        self.flip = options[CommonOptions.flip] == true
        self.flop = options[CommonOptions.flop] == true
        self.aspect = options[CommonOptions.aspect].flatMap(AspectRatio.init)
        self.aspectMode = options[CommonOptions.aspectMode] ?? .pad
        self.background = options[CommonOptions.background].flatMap(ImageColor.init)?.ffmpegName ?? "black"
    }

    /// Whether the rule changes the pixels themselves, which no display matrix can say: a crop, a mirror, a ratio.
    var editsPixels: Bool {
        self.crop != nil || self.flip || self.flop || self.aspect != nil
    }

    /// Whether a video already has the ratio, as shown (within half a percent).
    static func has(_ source: SourceStream, ratio: AspectRatio) -> Bool {
        let size = source.displaySize
        guard size.width > 0, size.height > 0 else { return false }
        let shown = Double(size.width) / Double(size.height)
        let wanted = ratio.width / ratio.height
        return abs(shown - wanted) <= 0.005 * wanted
    }

    /// The filters that crop, turn and mirror a picture of `size`, which becomes the size they give.
    ///
    /// - Throws: ``FFmpegError`` with code `unsupportedStream` when the crop box does not lie inside the picture.
    func orientationFilters(size: inout (width: Int, height: Int)) throws(FFmpegError) -> [String] {
        var filters: [String] = []
        if let crop = self.crop {
            switch crop.rectangle(inWidth: size.width, height: size.height, gravity: self.gravity) {
            case .failure(let problem):
                throw FFmpegError(.unsupportedStream, "crop", detail: problem.message)
            case .success(let box):
                // 4:2:0 video takes even sizes, and even offsets keep the colour planes aligned with the picture.
                let width = max(2, box.width - box.width % 2)
                let height = max(2, box.height - box.height % 2)
                filters.append("crop=w=\(width):h=\(height):x=\(box.x - box.x % 2):y=\(box.y - box.y % 2)")
                size = (width, height)
            }
        }
        switch self.degrees {
        case 90: filters.append("transpose=clock")
        case 180: filters += ["hflip", "vflip"]
        case 270: filters.append("transpose=cclock")
        default: break
        }
        if self.degrees % 180 == 90 {
            size = (size.height, size.width)
        }
        if self.flip { filters.append("vflip") }
        if self.flop { filters.append("hflip") }
        return filters
    }

    /// The filters that give a picture of `size` the rule's ratio, by bands of `background` or by cutting it; `size`
    /// becomes the result (even sides).
    func aspectFilters(size: inout (width: Int, height: Int)) -> [String] {
        guard let aspect = self.aspect else { return [] }
        switch self.aspectMode {
        case .pad:
            let box = aspect.smallestBox(holdingWidth: size.width, height: size.height)
            let width = box.width + box.width % 2
            let height = box.height + box.height % 2
            let x = (width - size.width) / 2
            let y = (height - size.height) / 2
            size = (width, height)
            return ["pad=width=\(width):height=\(height):x=\(x - x % 2):y=\(y - y % 2):color=\(self.background)"]
        case .crop:
            let box = aspect.largestBox(inWidth: size.width, height: size.height)
            let width = max(2, box.width - box.width % 2)
            let height = max(2, box.height - box.height % 2)
            let origin = self.gravity.origin(
                width: width,
                height: height,
                imageWidth: size.width,
                imageHeight: size.height
            )
            size = (width, height)
            return ["crop=w=\(width):h=\(height):x=\(origin.x - origin.x % 2):y=\(origin.y - origin.y % 2)"]
        }
    }
}
