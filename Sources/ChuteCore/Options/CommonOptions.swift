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

    /// `strip`: remove the metadata that says where and who; the same as `metadata: strip`.
    package static let strip = RuleOption<Bool>(
        "strip",
        .flag,
        summary: "The same as `metadata: strip` (`true`) or `metadata: keep` (`false`), as rules written before "
            + "`metadata` say it.",
        default: "`false`",
        stage: .metadata,
        check: { strip, context in
            guard let policy = context.options[CommonOptions.metadata], policy != (strip ? .strip : .keep) else {
                return nil
            }
            return OptionProblem("'strip: \(strip)' contradicts 'metadata: \(policy.rawValue)'; keep one", at: .key)
        },
        show: { $0 ? "strip metadata" : "keep metadata" }
    )

    /// `metadata`: what happens to the metadata that says where and who, in images, videos and audio.
    package static let metadata = RuleOption<MetadataPolicy>(
        "metadata",
        .choice(MetadataPolicy.allCases.map(\.rawValue)),
        summary: "`keep` carries over what the target holds: for images EXIF (capture date, camera, GPS), XMP, IPTC "
            + "and the ICC profile, from HEIC, AVIF and RAW sources too; for video and audio the container's and "
            + "streams' tags. `strip` removes, from images, EXIF with its thumbnail, GPS, XMP, IPTC, maker notes, "
            + "comments and PNG text, turning the pixels upright first (keeping the ICC profile); from video and "
            + "audio, every container and stream tag (creation time, location, make, model, software, encoder, "
            + "handler names, titles) but the streams' language, keeping the rotation. `location` removes only the "
            + "GPS directory, XMP that holds a location and the IPTC location fields of an image, or the location "
            + "tags of a video or audio file. A JPEG, PNG or WebP kept in its format, or a video or audio file whose "
            + "streams already suit the target, with no other option loses its metadata without a re-encode; an "
            + "image's sidecar lists the kinds removed (never their values).",
        default: "`keep`",
        stage: .metadata,
        show: { "metadata \($0.rawValue)" }
    )

    /// The metadata policy that `options` ask for: `metadata`, else `strip: true` as ``MetadataPolicy/strip``,
    /// else ``MetadataPolicy/keep``.
    package static func metadataPolicy(in options: ConversionOptions) -> MetadataPolicy {
        options[Self.metadata] ?? (options[Self.strip] == true ? .strip : .keep)
    }
}
