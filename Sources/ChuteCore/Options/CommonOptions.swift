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

    /// `maxFileSize`: compress to a size, images by searching their quality, videos in two passes.
    package static let maxFileSize = RuleOption<Int>(
        "maxFileSize",
        .byteSize(1000...(1 << 30)),
        summary: "Compress to at most this size, such as `300KB`. Images: the highest quality from `quality` down to "
            + "40 % that fits is searched, and when even 40 % is too large the image is scaled down; the sidecar's "
            + "`details` give the `quality` chosen (and the `scale`). Videos: h264 is encoded in two passes at the "
            + "bitrate that fills the size, less the audio and the container's overhead; the sidecar gives the "
            + "`videoBitrate` chosen. Not with `crf` or `videoBitrate`.",
        stage: .encode,
        formats: ["jpg", "webp", "heic", "mp4", "mkv", "mov"],
        check: { _, context in
            guard context.format.category == .video else { return nil }
            // The video engine's keys by name: ChuteCore cannot see its options.
            if context.options["crf"] != nil || context.options["videoBitrate"] != nil {
                return OptionProblem("set either 'maxFileSize' or 'crf'/'videoBitrate', not both", at: .key)
            }
            if let codec = context.options["videoCodec"], codec != .text("h264") {
                return OptionProblem("'maxFileSize' encodes h264 video in two passes, not \(codec)", at: .key)
            }
            return nil
        },
        show: { "at most \(ValueParsing.describe(bytes: Int64($0)))" }
    )
}
