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

    /// `shortSide`: the largest output short side, whichever way the picture is turned.
    package static let shortSide = RuleOption<Int>(
        "shortSide",
        .integer(2...Int.max),
        summary: "The picture's short side is at most this, in pixels, as it is shown (a photo after its EXIF "
            + "orientation, a clip after its rotation): the height of a landscape picture, the width of a portrait "
            + "one (`shortSide: 720` is \"720p\" either way). With `width`, `height` or `longSide`, the smallest box "
            + "wins; nothing is upscaled (unless `upscale`, for video). Not for contact sheets.",
        stage: .resize,
        show: { "short side ≤ \($0)" }
    )

    /// `longSide`: the largest output long side, whichever way the picture is turned.
    package static let longSide = RuleOption<Int>(
        "longSide",
        .integer(2...Int.max),
        summary: "The picture's long side is at most this, in pixels, as it is shown: the width of a landscape "
            + "picture, the height of a portrait one. With `width`, `height` or `shortSide`, the smallest box wins; as "
            + "for `shortSide`.",
        stage: .resize,
        show: { "long side ≤ \($0)" }
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
            + "image's sidecar lists the kinds removed (never their values). From a PDF, `strip` removes the "
            + "document information dictionary (title, author, dates, producer), the XMP of the document and its "
            + "pages and the editors' private data, and writes the whole file anew, so that no old value survives "
            + "as an unreferenced object; a PDF has no `location`.",
        default: "`keep`",
        stage: .metadata,
        check: { policy, context in
            guard context.format.category == .pdf, policy == .location else { return nil }
            return OptionProblem("a PDF holds no location to remove; use 'metadata: strip' or 'keep'")
        },
        show: { "metadata \($0.rawValue)" }
    )

    /// The metadata policy that `options` ask for: `metadata`, else `strip: true` as ``MetadataPolicy/strip``,
    /// else ``MetadataPolicy/keep``.
    package static func metadataPolicy(in options: ConversionOptions) -> MetadataPolicy {
        options[Self.metadata] ?? (options[Self.strip] == true ? .strip : .keep)
    }

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

extension CommonOptions {
    /// `password`: what opens an encrypted PDF or office document.
    package static let password = RuleOption<String>(
        "password",
        .text(
            TextSyntax(name: "the password, as text") { text in
                text.isEmpty ? "an empty password opens nothing that needs one; leave the key out" : nil
            }
        ),
        summary: "The password that opens an encrypted PDF (its user or owner password) or a password-protected "
            + "DOCX, XLSX or PPTX. Without it an encrypted PDF (even one that opens without a password but restricts "
            + "changes) or document fails as `encrypted`, as it does with a password that does not open it; with it "
            + "the output is written unencrypted. Sidecars, logs and `chute check` never show it.",
        stage: .decode,
        show: { _ in "password given" }
    )

    /// The keys whose values are secrets: sidecars record them as ``hiddenValue``.
    package static let secretKeys: Set<String> = [Self.password.key]

    /// What a sidecar records for a secret.
    package static let hiddenValue = OptionValue.text("(hidden)")
}
