/// How `aspect` gives a picture its ratio.
package enum AspectMode: String, Sendable, Hashable, CaseIterable, OptionValueConvertible {
    case pad, crop
}

extension CommonOptions {
    /// `crop`: keep a box of the picture, or its largest box of a ratio.
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
        summary: "Keep only this part of the (upright) picture: a box `WxH+X+Y` in pixels or percentages of the "
            + "picture (`800x600+10+20`, `50%x50%+25%+0`; without `+X+Y`, `gravity` places it), or the largest box of "
            + "a ratio (`16:9`), placed by `gravity`. A box not wholly inside the picture fails the job. Video boxes "
            + "are rounded down to even sizes and offsets.",
        stage: .crop,
        show: { "crop \($0)" }
    )

    /// `gravity`: where `crop` and `aspectMode: crop` place their box.
    package static let gravity = RuleOption<Gravity>(
        "gravity",
        .choice(Gravity.allCases.map(\.rawValue)),
        summary: "Where a `crop` without offsets, a `crop` ratio or `aspectMode: crop` takes its box: `center`, or "
            + "towards a side or corner (`north` is the top edge, `southeast` the bottom right corner).",
        default: "`center`",
        stage: .crop,
        check: { _, context in
            let crop = context.options[CommonOptions.crop].flatMap { try? CropGeometry(parsing: $0) }
            let aspectCrops =
                context.options[CommonOptions.aspect] != nil
                && context.options[CommonOptions.aspectMode] == .crop
            guard crop?.usesGravity != true, !aspectCrops else { return nil }
            return OptionProblem(
                "'gravity' places a crop box; it needs a 'crop' without +X+Y offsets, or 'aspectMode: crop'",
                at: .key
            )
        },
        show: { "gravity \($0.rawValue)" }
    )

    /// `rotate`: turn the picture clockwise.
    package static let rotate = RuleOption<Double>(
        "rotate",
        .number(NumberRange(from: -360, upTo: 360, wording: "degrees from -360 to 360")),
        summary: "Turn the picture clockwise by this many degrees (negative: anticlockwise). Images: multiples of 90 "
            + "move the pixels exactly; other angles enlarge the canvas to hold the whole turned image and fill its "
            + "corners with `background`. Video: multiples of 90 only; mp4 and mov turn it by the display matrix "
            + "(the packets are copied when nothing else changes), other containers by turning the pixels. PDF: "
            + "multiples of 90 only; every page (of those `pages` keeps) turns by its `/Rotate`, the content untouched.",
        stage: .rotate,
        check: { degrees, context in
            guard context.format.category != .image, degrees.truncatingRemainder(dividingBy: 90) != 0 else {
                return nil
            }
            return OptionProblem(
                "a \(context.format.category == .pdf ? "PDF page" : "video") turns by a multiple of 90 degrees "
                    + "(90, 180, 270, or negative), found \(OptionValue.number(degrees))"
            )
        },
        show: { "rotate \(OptionValue.number($0))°" }
    )

    /// `flip`: mirror top to bottom.
    package static let flip = RuleOption<Bool>(
        "flip",
        .flag,
        summary: "Mirror the picture top to bottom (after `rotate`).",
        default: "`false`",
        stage: .rotate,
        show: { $0 ? "flip top to bottom" : "no flip" }
    )

    /// `flop`: mirror left to right.
    package static let flop = RuleOption<Bool>(
        "flop",
        .flag,
        summary: "Mirror the picture left to right (after `rotate` and `flip`).",
        default: "`false`",
        stage: .rotate,
        show: { $0 ? "flop left to right" : "no flop" }
    )

    /// `background`: the colour of what `rotate` and `aspect` add.
    package static let background = RuleOption<String>(
        "background",
        .text(
            TextSyntax(name: ImageColor.grammarName, pattern: ImageColor.pattern) { text in
                ImageColor(text) == nil ? "expected \(ImageColor.grammarName)" : nil
            }
        ),
        summary: "The colour of the corners that `rotate` uncovers and of the bands that `aspect` adds.",
        default: "`transparent` for png, webp, tiff and gif; `white` for the other images; `black` for video",
        stage: .rotate,
        check: { text, context in
            if ImageColor(text)?.isOpaque == false, !ImageColor.keepsTransparency(context.format) {
                return OptionProblem("\(context.format.name) has no transparency; give an opaque 'background'")
            }
            let options = context.options
            let turns = options[CommonOptions.rotate].map { $0.truncatingRemainder(dividingBy: 90) != 0 } ?? false
            let pads = options[CommonOptions.aspect] != nil && options[CommonOptions.aspectMode] != .crop
            guard !turns, !pads else { return nil }
            return OptionProblem(
                "'background' colours what 'rotate' (by an angle not a multiple of 90) or 'aspect' (padding) adds; "
                    + "the rule sets neither",
                at: .key
            )
        },
        show: { "background \($0)" }
    )

    /// `aspect`: give the picture a ratio.
    package static let aspect = RuleOption<String>(
        "aspect",
        .text(
            TextSyntax(name: "a ratio `W:H`", pattern: #"^[0-9.]+:[0-9.]+$"#) { text in
                AspectRatio(text) == nil ? "a ratio is two positive numbers such as 4:5" : nil
            }
        ),
        summary: "Give the (resized) picture this shape, such as `4:5` or `16:9`: by adding bands of `background` "
            + "on two sides (`aspectMode: pad`), or by cutting it (`aspectMode: crop`, placed by `gravity`).",
        stage: .pad,
        show: { "aspect \($0)" }
    )

    /// `aspectMode`: how `aspect` reaches its ratio.
    package static let aspectMode = RuleOption<AspectMode>(
        "aspectMode",
        .choice(AspectMode.allCases.map(\.rawValue)),
        summary: "How `aspect` reaches its ratio: `pad` keeps the whole picture, centred between bands of "
            + "`background`; `crop` keeps the largest part of that shape. Needs `aspect`.",
        default: "`pad`",
        stage: .pad,
        check: { _, context in
            guard context.options[CommonOptions.aspect] == nil else { return nil }
            return OptionProblem("'aspectMode' needs 'aspect'", at: .key)
        },
        show: { "aspectMode \($0.rawValue)" }
    )
}
