import ChuteCore

extension EngineKind {
    /// The PDF engine's lane.
    package static let pdf = EngineKind(rawValue: "pdf")
}

/// The PDF engine's rule keys, each declared once; the engine reads them as `request.options[PDFOptions.split]`.
package enum PDFOptions {
    /// `pages`: keep, leave out and reorder pages.
    package static let pages = RuleOption<String>(
        "pages",
        .text(
            TextSyntax(name: PageRanges.grammarName, pattern: PageRanges.pattern) { text in
                do throws(PageRanges.Problem) {
                    _ = try PageRanges(parsing: text)
                    return nil
                } catch {
                    return error.message
                }
            }
        ),
        summary: "The pages of the output, in this order: ranges such as `1-3,5` (a page twice appears twice; "
            + "`z` is the last page, `z-1` every page backwards), and `xN` or `xA-B` to leave pages out (`1-z,x2`, "
            + "or simply `x2`, is every page but the second). A page past the end fails the job. The outline, "
            + "forms and other document-level parts stay.",
        stage: .crop,
        show: { "pages \($0)" }
    )

    /// `split`: one output per page, or per range.
    package static let split = RuleOption<String>(
        "split",
        .text(
            TextSyntax(name: "`pages`, or page ranges such as `1-3,4-10`") { text in
                guard text != Self.everyPage else { return nil }
                do throws(PageRanges.Problem) {
                    let ranges = try PageRanges(parsing: text)
                    return ranges.excludes ? "split takes ranges to write, not pages to leave out (x…)" : nil
                } catch {
                    return error.message
                }
            }
        ),
        summary: "Write several PDFs instead of one: `pages` makes one per page, ranges such as `1-3,4-10` one per "
            + "range (named `-p1to3`, `-p4to10`; a single page `-p5`), at most 100, listed in one sidecar and "
            + "committed together or not at all. Applies after `pages` and `rotate`, to the pages they leave.",
        stage: .tile,
        show: { $0 == Self.everyPage ? "one PDF per page" : "split into \($0)" }
    )

    /// The value of `split` that makes one output per page.
    package static let everyPage = "pages"

    /// `compress`: rewrite a PDF smaller.
    package static let compress = RuleOption<Bool>(
        "compress",
        .flag,
        summary: "Rewrite the PDF smaller: objects packed into object streams, and every stream compressed with "
            + "general-purpose filters decoded and compressed again (images compressed as JPEG, JBIG2, CCITT or "
            + "JPEG 2000 are kept as they are), and with `dpi` every 8-bit grey or RGB page image finer than that "
            + "resampled to it and stored as a JPEG at `quality`, where that is smaller (`imagesResampled` says "
            + "how many, and the bytes before and after). The sidecar's `details` give `bytesBefore` and "
            + "`bytesAfter`; when the rewrite is not smaller and no other option changes the "
            + "file, the source's own bytes are written and `compressed` says so.",
        default: "`false`",
        stage: .encode,
        show: { $0 ? "compress" : "no compression" }
    )

    /// `dpi`: the resolution of pages rendered as images.
    package static let dpi = RuleOption<Double>(
        "dpi",
        .number(NumberRange(from: 10, upTo: 1200, wording: "dots per inch from 10 to 1200")),
        summary: "From a PDF to `png`, `jpg` or `webp`: each page (of those `pages` keeps) becomes one image at this "
            + "resolution, drawn by poppler on white and turned as the page's `/Rotate` says; a page of 8.5 × 11 "
            + "inches at 150 dpi is 1275 × 1650 pixels. JPEG and WebP are encoded at `quality`. The images are "
            + "named `-p1`, `-p2`, … (at most 100), in one sidecar. From a PDF to `pdf` with `compress`: the "
            + "resolution page images are resampled to (a page image's resolution is its pixels over its page's "
            + "size).",
        default: "`150` (rendered pages); none (`compress` resamples no image)",
        stage: .resize,
        formats: ["jpg", "png", "webp", "pdf"],
        check: { _, context in
            guard context.format.name == "pdf", context.options[PDFOptions.compress] != true else { return nil }
            return OptionProblem(
                "'dpi' on a pdf target is the resolution 'compress: true' resamples images to; the rule does not "
                    + "compress",
                at: .key
            )
        },
        show: { "\(OptionValue.number($0)) dpi" }
    )

    /// The size of the pages that images are laid on.
    package enum PageSize: String, Sendable, CaseIterable, OptionValueConvertible {
        /// The image's own size at its resolution (72 dpi when it gives none).
        case image
        /// ISO A4, 210 × 297 mm.
        case a4
        /// US Letter, 8.5 × 11 inches.
        case letter

        /// The width and height in points of a portrait page; `nil` for ``image``.
        package var points: (width: Double, height: Double)? {
            switch self {
            case .image: nil
            case .a4: (210 / 25.4 * 72, 297 / 25.4 * 72)
            case .letter: (612, 792)
            }
        }
    }

    /// `pageSize`: the pages of images made into a PDF.
    package static let pageSize = RuleOption<PageSize>(
        "pageSize",
        .choice(PageSize.allCases.map(\.rawValue)),
        summary: "Images to `pdf` (a group of images, or one image): each image on a page of its own, `image` "
            + "sized (the image at its resolution, 72 dpi when it gives none), or `a4` or `letter`, turned to "
            + "landscape for a landscape image, the image fitted within `margin` and centred. JPEGs are stored as "
            + "they are (no re-encoding), other images (HEIC, PNG, …) as JPEGs at `quality`, or losslessly (Flate) "
            + "with `lossless`.",
        default: "`image`",
        stage: .pad,
        formats: ["pdf"],
        show: { "pages \($0.rawValue) sized" }
    )

    /// `lossless`: images laid on pages are stored without loss.
    package static let lossless = RuleOption<Bool>(
        "lossless",
        .flag,
        summary: "Images to `pdf`: store each image that is not a JPEG (HEIC, PNG, TIFF, …) losslessly (Flate), "
            + "rather than as a JPEG at `quality`; a file several times larger for photos. JPEGs are always "
            + "stored as they are.",
        default: "`false`",
        stage: .encode,
        formats: ["pdf"],
        show: { $0 ? "images stored losslessly" : "images stored as JPEG" }
    )

    /// `margin`: white space around an image laid on a page.
    package static let margin = RuleOption<String>(
        "margin",
        .text(
            TextSyntax(name: "a length such as `10mm`, `1cm`, `0.5in` or `20pt`", pattern: Self.lengthPattern) {
                guard let points = Self.points($0) else { return "a length is a number and mm, cm, in or pt" }
                return points > Self.marginLimit ? "a margin is at most 100mm" : nil
            }
        ),
        summary: "Images to `pdf`: the white space left on each side of the image, such as `10mm` (mm, cm, in or "
            + "pt); with `pageSize: image` the page grows by it.",
        default: "`0`",
        stage: .pad,
        formats: ["pdf"],
        show: { "margin \($0)" }
    )

    /// A length: a number and its unit.
    package static let lengthPattern = #"^ *[0-9]+(\.[0-9]+)? *(mm|cm|in|pt) *$"#
    /// The widest margin, in points (100 mm).
    package static let marginLimit = 100 / 25.4 * 72

    /// A length of `margin` in points (1/72 inch), or `nil` when it is not a number and a unit.
    package static func points(_ text: String) -> Double? {
        let trimmed = text.filter { $0 != " " }
        let units: [String: Double] = ["mm": 72 / 25.4, "cm": 720 / 25.4, "in": 72, "pt": 1]
        guard trimmed.count > 2, let unit = units[String(trimmed.suffix(2))],
            let number = Double(trimmed.dropLast(2)), number >= 0, number.isFinite
        else { return nil }
        return number * unit
    }

    /// `watermarkRotation`: how far a PDF's watermark is turned.
    package static let watermarkRotation = RuleOption<Double>(
        "watermarkRotation",
        .number(NumberRange(from: -360, upTo: 360, wording: "degrees from -360 to 360")),
        summary: "PDF: turn the watermark this many degrees anticlockwise about its centre (`45`: rising from "
            + "bottom left to top right); `watermarkPosition` places the turned mark.",
        default: "`0`",
        stage: .watermark,
        check: { _, context in
            guard context.options[CommonOptions.watermark] == nil, context.options["watermarkImage"] == nil
            else { return nil }
            return OptionProblem("'watermarkRotation' needs 'watermark' or 'watermarkImage'", at: .key)
        },
        show: { "watermark turned \(OptionValue.number($0))°" }
    )

    /// The resolution of rendered pages when the rule gives no `dpi`.
    package static let defaultDPI = 150.0

    /// The operations' keys, in the order the docs list them.
    package static let specs: [OptionSpec] = [
        Self.pages.spec, CommonOptions.rotate.spec, Self.split.spec, Self.compress.spec, CommonOptions.metadata.spec,
        CommonOptions.strip.spec, CommonOptions.password.spec, Self.dpi.spec, ImageOptions.quality.spec,
        Self.pageSize.spec, Self.margin.spec, Self.lossless.spec,
        CommonOptions.watermark.spec, ImageOptions.watermarkImage.spec, Self.watermarkRotation.spec,
        CommonOptions.watermarkPosition.spec, CommonOptions.watermarkOpacity.spec, CommonOptions.watermarkSize.spec,
    ]

    /// The keys that apply when a PDF's pages are rendered as images.
    package static let renderingKeys: Set<String> = [
        Self.pages.key, CommonOptions.password.key, Self.dpi.key, ImageOptions.quality.key,
    ]
}

extension Engines {
    /// The PDF engine's lane, format and options.
    package static let pdf = EngineDescriptor(
        kind: .pdf,
        library: "qpdf (C API); poppler (GLib) and cairo to render pages",
        reads: [.pdf, .image],
        concurrency: .perCore,
        formats: [TargetFormat(name: "pdf", category: .pdf, engine: .pdf, coder: "pdf", holdsSeveralFrames: true)],
        options: PDFOptions.specs,
        alsoWrites: [
            EngineDescriptor.AlsoWrites(["jpg", "png", "webp"], from: [.pdf], options: PDFOptions.renderingKeys)
        ],
        // A group of PDFs and images is merged: the pages of each PDF and a page for each image, in order; every
        // option then applies to the merged document.
        joinsGroups: { _, _ in nil },
        worker: "chute-pdf-worker"
    )
}
