/// Options that more than one engine takes, declared once so that every engine reads the same key the same way.
package enum CommonOptions {
    /// `width`: the largest output width.
    package static let width = RuleOption<Int>(
        "width",
        .integer(1...Int.max),
        summary: "The output is at most this wide, in pixels; the aspect ratio is kept and nothing is upscaled "
            + "(unless `upscale`, for video).",
        stage: .resize,
        show: { "width ≤ \($0)" }
    )

    /// `height`: the largest output height.
    package static let height = RuleOption<Int>(
        "height",
        .integer(1...Int.max),
        summary: "The output is at most this high, in pixels; as for `width`.",
        stage: .resize,
        show: { "height ≤ \($0)" }
    )
}
