/// The watermark options, which the image and PDF engines share (`watermarkImage` is the image engine's alone).
extension CommonOptions {
    /// `watermark`: a line of text laid on an image or on the pages of a PDF.
    package static let watermark = RuleOption<String>(
        "watermark",
        .text(
            TextSyntax(name: "a line of text") { text in
                if text.count > 200 { return "a watermark is at most 200 characters" }
                return text.unicodeScalars.contains { $0.properties.generalCategory == .control }
                    ? "a watermark is one line, without control characters" : nil
            }
        ),
        summary: "Draw this line of text on the image, such as `\"© 2026 Me\"`: white with a dark outline, in DejaVu "
            + "Sans, `watermarkSize` wide, placed by `watermarkPosition`, at `watermarkOpacity`. Not with "
            + "`watermarkImage`. PDF: on every page, as page content over what is there (whose text stays "
            + "selectable), in Helvetica, Latin-1 characters only.",
        stage: .watermark,
        check: { text, context in
            if context.format.category == .pdf, text.unicodeScalars.contains(where: { $0.value > 0xFF }) {
                return OptionProblem("a PDF watermark is drawn in Helvetica: Latin-1 characters only")
            }
            guard context.options["watermarkImage"] != nil else { return nil }
            return OptionProblem("'watermark' and 'watermarkImage' cannot both be set; choose one", at: .key)
        },
        show: { "watermark \"\($0)\"" }
    )

    /// `watermarkPosition`: where the watermark goes.
    package static let watermarkPosition = RuleOption<Gravity>(
        "watermarkPosition",
        .choice(Gravity.allCases.map(\.rawValue)),
        summary: "Where the watermark goes: a corner, a side or the `center`, 2 % of the shorter side in from the "
            + "edges.",
        default: "`southeast`",
        stage: .watermark,
        check: { _, context in CommonOptions.needsWatermark("watermarkPosition", context) },
        show: { "watermark at \($0.rawValue)" }
    )

    /// `watermarkOpacity`: how opaque the watermark is.
    package static let watermarkOpacity = RuleOption<Double>(
        "watermarkOpacity",
        .number(NumberRange(above: 0, upTo: 1)),
        summary: "How opaque the watermark is, from invisible (0) to opaque (1).",
        default: "`0.5`",
        stage: .watermark,
        check: { _, context in CommonOptions.needsWatermark("watermarkOpacity", context) },
        show: { "watermark opacity \(OptionValue.number($0))" }
    )

    /// `watermarkSize`: the watermark's width relative to the image's.
    package static let watermarkSize = RuleOption<Double>(
        "watermarkSize",
        .number(NumberRange(above: 0, upTo: 1)),
        summary: "The watermark's width as a fraction of the image's (or the PDF page's) width (`0.25`: a quarter).",
        default: "`0.25`",
        stage: .watermark,
        check: { _, context in CommonOptions.needsWatermark("watermarkSize", context) },
        show: { "watermark size \(OptionValue.number($0))" }
    )

    /// The problem of a `watermark…` setting in a rule without a watermark.
    private static func needsWatermark(_ key: String, _ context: OptionContext) -> OptionProblem? {
        guard context.options[CommonOptions.watermark] == nil, context.options["watermarkImage"] == nil
        else { return nil }
        return OptionProblem("'\(key)' needs 'watermark' or 'watermarkImage'", at: .key)
    }
}
