import ChuteCore

extension MediaOptions {
    /// The picture formats the video engine writes from a video: a poster frame, or a sticker (`gif`, and `webp`
    /// with a `duration`).
    static let frameFormats: Set<String> = ["jpg", "png", "webp", "gif"]

    /// The longest a sticker lasts, in seconds.
    static let stickerSecondsCap = 10.0

    /// `start`: where in a video its poster frame or sticker is taken.
    package static let start = RuleOption<Double>(
        "start",
        .number(NumberRange(from: 0, upTo: 86_400, wording: "from 0 to 86400 seconds")),
        summary: "Seconds into a video where its picture is taken: the poster frame of a `jpg`, `png` or `webp`, or "
            + "the start of a sticker (`gif`, or `webp` with `duration`). Without it, a poster is a representative "
            + "frame of the first seconds, and a sticker starts at 0.",
        default: "a representative frame (poster), 0 (sticker)",
        stage: .decode,
        formats: MediaOptions.frameFormats,
        show: { "from \(OptionValue.number($0)) s" }
    )

    /// `duration`: how long a sticker made from a video lasts.
    package static let duration = RuleOption<Double>(
        "duration",
        .number(NumberRange(above: 0, upTo: MediaOptions.stickerSecondsCap)),
        summary: "Seconds of a video a sticker covers, from `start`: a `gif`, or an animated `webp` (which a `webp` "
            + "from a video becomes with it), looping forever, at most 512 px on its longest side (or the `width` and "
            + "`height` box) and 15 frames a second, with a palette made for it.",
        default: "3 (gif); none: a still webp",
        stage: .decode,
        formats: MediaOptions.frameFormats.subtracting(["jpg", "png"]),
        show: { "for \(OptionValue.number($0)) s" }
    )
}
