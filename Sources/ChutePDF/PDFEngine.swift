import CQPDF
import ChuteCatalog
import ChuteCore
import ChuteMagick
import SystemPackage

/// The PDF engine: rewrites PDFs with qpdf, through its C API, makes PDFs of images, and draws pages as images.
///
/// A conversion reads the input through one descriptor; an image becomes a page of its own (see
/// ``appendImage(_:to:request:)``), a group's files are merged in order. Otherwise it checks that its content is a
/// PDF, opens it with the rule's
/// `password` (an encrypted PDF without one fails as `encrypted`), then in this order keeps the pages of `pages`,
/// turns them by `rotate`, removes the metadata under `metadata: strip`, and writes the whole file anew (with
/// `compress`, packed into object streams and recompressed), or with `split` one PDF per page or range, each a part
/// of the job (``OutputPart``). Every output is read back with qpdf and must have the pages it was given before it
/// is written.
///
/// - Important: ``convert(_:progress:)`` blocks in C code; call it on a worker's own thread.
package struct PDFEngine: ConversionEngine {
    /// The largest input accepted, in bytes.
    static let inputByteLimit = 1 << 30

    package init() {}

    package var kind: EngineKind { .pdf }

    /// `qpdf` and its release.
    package var libraries: [String: String] {
        ["qpdf": qpdf_get_qpdf_version().map { String(cString: $0) } ?? "unknown"]
    }

    /// Converts `request.input` into `request.output`, or into one part per page or range with `split`.
    ///
    /// - Parameters:
    ///   - request: the job; `output` must not exist.
    ///   - progress: called with 0.2 (opened), 0.5 (pages chosen and turned, metadata removed) and 1 (written).
    /// - Returns: the output's size, qpdf's warnings (repairs of a damaged file, led by one saying that the file was
    ///   repaired when its page tree was lost), and the details `inputPages`,
    ///   `outputPages`, `pdfVersion`, with `metadataRemoved` under `metadata: strip` and `bytesBefore`,
    ///   `bytesAfter` and `compressed` with `compress`.
    /// - Throws: ``ConversionFailure`` carrying qpdf's own message: `encrypted` for a PDF the rule's password does
    ///   not open (or that is encrypted when the rule gives none), `corruptInput` for damage qpdf cannot repair,
    ///   `unsupportedInput` for content that is not a PDF and for `pages` or `split` ranges past its end. Every file
    ///   written so far is removed first.
    package func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let options = request.options
        let password = options[CommonOptions.password]
        var report = ConversionReport(outputBytes: 0)
        // The source's bytes when it is one PDF; empty for a group or an image, whose pages merge(_:request:) makes.
        var bytes: [UInt8] = []
        let document: PDFDocument
        let sourceByteCount: Int
        if let inputs = request.inputs {
            guard request.format.category != .image else {
                throw ConversionFailure(
                    .unsupportedInput,
                    "a group of PDFs is merged into one PDF, not drawn as images"
                )
            }
            (document, sourceByteCount) = try Self.merge(inputs, request: request, report: &report)
            report.details["inputFiles"] = String(inputs.count)
        } else {
            let source = try PDFFiles.readInput(request, limit: Self.inputByteLimit)
            if let type = MediaType.sniff(source.prefix(MediaType.headerLength)), type.category == .image,
                request.format.category == .pdf
            {
                report.captured = ImageEngine.captureTime(of: source, type: type)
                document = try Self.run { () throws(PDFError) in try PDFDocument() }
                report.warnings += try Self.appendImage(source, to: document, request: request)
            } else {
                bytes = source
                document = try Self.open(bytes, password: password)
            }
            sourceByteCount = source.count
        }
        let inputPages = try Self.run { () throws(PDFError) in try document.pageCount() }
        guard inputPages > 0 else { throw ConversionFailure(.corruptInput, "the PDF has no pages") }
        if let limit = request.limits.frames, inputPages > limit {
            throw ConversionFailure(.limitExceeded, "the PDF has \(inputPages) pages, more than maxFrames \(limit)")
        }
        report.details["inputPages"] = String(inputPages)
        if let pages = document.restoredPages {
            report.warnings.append(
                "the PDF was damaged and has been repaired: its page tree was lost, and a new one was made of the "
                    + "\(pages) pages found in the file; qpdf rebuilt its cross-reference table (its warnings follow)"
            )
        }
        report.details["pdfVersion"] = document.version
        if document.isEncrypted { report.details["encryption"] = "removed (opened with the rule's password)" }
        progress(JobProgress(fraction: 0.2))

        var selection = Array(1...inputPages)
        if let text = options[PDFOptions.pages] {
            selection = try Self.pages(text, in: inputPages, for: "pages") {
                (ranges, count) throws(PageRanges.Problem) in try ranges.selection(in: count)
            }
        }
        if request.format.category == .image {
            return try Self.render(
                bytes,
                pages: selection,
                password: password,
                request: request,
                report: report,
                progress: progress
            )
        }
        if options[PDFOptions.pages] != nil {
            try Self.run { () throws(PDFError) in try document.keepPages(selection.map { $0 - 1 }) }
        }
        if let degrees = options[CommonOptions.rotate] {
            guard degrees.truncatingRemainder(dividingBy: 90) == 0 else {
                throw ConversionFailure(.unsupportedInput, "a PDF page turns by a multiple of 90 degrees")
            }
            try Self.run { () throws(PDFError) in try document.rotatePages(by: Int(degrees)) }
        }
        if let watermark = try Self.watermark(request) {
            try Self.run { () throws(PDFError) in try document.addWatermark(watermark) }
        }
        let policy = CommonOptions.metadataPolicy(in: options)
        if policy == .strip {
            let kinds = try Self.run { () throws(PDFError) in try document.metadataKinds() }
            try Self.run { () throws(PDFError) in try document.removeMetadata() }
            report.details["metadataRemoved"] = kinds.isEmpty ? "none" : kinds.joined(separator: ", ")
        }
        let pageCount = try Self.run { () throws(PDFError) in try document.pageCount() }
        progress(JobProgress(fraction: 0.5))
        let settings = PDFDocument.WriteSettings(compress: options[PDFOptions.compress] == true)
        var resampledImages = 0
        if settings.compress, let dpi = options[PDFOptions.dpi] {
            let resampled = try Self.resampleImages(of: document, to: dpi, request: request)
            report.details["imagesResampled"] = resampled.summary
            report.warnings += resampled.warnings
            resampledImages = resampled.count
        }

        if let split = options[PDFOptions.split] {
            report = try Self.writeParts(
                of: document,
                split: split,
                pageCount: pageCount,
                keepMetadata: policy != .strip,
                settings: settings,
                request: request,
                report: report,
                progress: progress
            )
        } else {
            var output = try Self.run { () throws(PDFError) in try document.write(settings) }
            if settings.compress {
                let onlyCompresses =
                    !bytes.isEmpty && options[PDFOptions.pages] == nil && options[CommonOptions.rotate] == nil
                    && policy != .strip
                    && password == nil && options[CommonOptions.watermark] == nil
                    && options[ImageOptions.watermarkImage] == nil
                report.details["bytesBefore"] = String(sourceByteCount)
                if output.count >= sourceByteCount && onlyCompresses {
                    report.details["compressed"] =
                        "no: the rewrite was \(output.count) bytes, not smaller; the source's bytes were kept"
                    if resampledImages > 0, let summary = report.details["imagesResampled"] {
                        report.details["imagesResampled"] = summary + ", not kept: the source's bytes were"
                    }
                    output = bytes
                } else if output.count >= sourceByteCount {
                    report.details["compressed"] =
                        "no: the rewrite is not smaller, but it is kept for the rule's other changes"
                } else {
                    report.details["compressed"] = "yes"
                }
                report.details["bytesAfter"] = String(output.count)
            }
            try Self.verify(output, pages: pageCount)
            try TemporaryFile.writeOutput(output, at: request.output)
            report.outputBytes = Int64(output.count)
        }
        report.details["outputPages"] = String(pageCount)
        report.warnings = Array((report.warnings + document.warnings().map { "qpdf: \($0)" }).prefix(20))
        progress(JobProgress(fraction: 1))
        return report
    }

    /// Checks that `bytes` are a PDF and opens them with the rule's `password`.
    ///
    /// - Throws: `unsupportedInput` (`corruptInput` for an empty ZIP archive) for content that is not a PDF, saying
    ///   what it is; `encrypted` for a PDF the password does not open,
    ///   or that is encrypted when the rule gives none; qpdf's failure otherwise.
    private static func open(_ bytes: [UInt8], password: String?) throws(ConversionFailure) -> PDFDocument {
        guard MediaType.sniff(bytes.prefix(MediaType.headerLength)) == .pdf else {
            throw ConversionFailure.unexpectedContent(bytes, expected: "a PDF")
        }
        let document: PDFDocument
        do {
            document = try PDFDocument(reading: bytes, password: password)
        } catch  where error.kind == .password && password == nil {
            throw ConversionFailure(.encrypted, "the PDF is encrypted and the rule gives no password: \(error)")
        } catch {
            throw error.conversionFailure
        }
        if document.isEncrypted && password == nil {
            throw ConversionFailure(
                .encrypted,
                "the PDF is encrypted (it opens without a password, but restricts what may be done with it); "
                    + "give its owner password as the rule's password"
            )
        }
        return document
    }

    /// Reads the files of a group in order, each through its own descriptor as a single input is, and appends
    /// to a new document all the pages of each PDF (``PDFDocument/appendAllPages(of:)``) and each image on a page of
    /// its own (``appendImage(_:to:request:)``).
    ///
    /// - Returns: the merged document and the size of all the files read; the images' warnings go into `report`.
    /// - Throws: ``ConversionFailure`` naming the file of the group that failed (its name, and its place in the
    ///   group), with that file's own failure.
    private static func merge(
        _ inputs: [FilePath],
        request: ConversionRequest,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> (PDFDocument, Int) {
        let merged = try Self.run { () throws(PDFError) in try PDFDocument() }
        var total = 0
        for (index, input) in inputs.enumerated() {
            var one = request
            one.input = input
            one.inputs = nil
            do throws(ConversionFailure) {
                let bytes = try PDFFiles.readInput(one, limit: Self.inputByteLimit)
                if let type = MediaType.sniff(bytes.prefix(MediaType.headerLength)), type.category == .image {
                    if index == 0 {
                        // An album's `{taken}` is its first photo's.
                        report.captured = ImageEngine.captureTime(of: bytes, type: type)
                    }
                    report.warnings += try Self.appendImage(bytes, to: merged, request: one)
                } else {
                    let document = try Self.open(bytes, password: request.options[CommonOptions.password])
                    // qpdf rebuilds a damaged file from what it finds, which may be nothing.
                    guard try Self.run({ () throws(PDFError) in try document.pageCount() }) > 0 else {
                        throw ConversionFailure(.corruptInput, "the PDF has no pages")
                    }
                    try Self.run { () throws(PDFError) in try merged.appendAllPages(of: [document]) }
                }
                total += bytes.count
            } catch {
                throw error.inGroup(input, index: index, count: inputs.count)
            }
        }
        return (merged, total)
    }

    /// Writes one PDF per page (`split: pages`) or per range of `split`, each a part beside `request.output`,
    /// labelled `p5` for a single page and `p1to3` for a range.
    ///
    /// - Returns: the report with one part per output, `outputBytes` their total.
    /// - Throws: ``ConversionFailure``; `unsupportedInput` for a range past the end or named twice, `limitExceeded`
    ///   for more than ``OutputPart/limit`` outputs. Every part written so far is removed first.
    private static func writeParts(
        of document: PDFDocument,
        split: String,
        pageCount: Int,
        keepMetadata: Bool,
        settings: PDFDocument.WriteSettings,
        request: ConversionRequest,
        report: ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        var report = report
        let groups: [[Int]]
        if split == PDFOptions.everyPage {
            groups = (1...pageCount).map { [$0] }
        } else {
            groups = try Self.pages(split, in: pageCount, for: "split") { ranges, count throws(PageRanges.Problem) in
                var groups: [[Int]] = []
                for range in ranges.ranges { groups.append(try range.pages(in: count)) }
                return groups
            }
        }
        guard groups.count <= OutputPart.limit else {
            throw ConversionFailure(
                .limitExceeded,
                "split would write \(groups.count) PDFs, more than the \(OutputPart.limit) one job may write"
            )
        }
        let labels = groups.map { $0.count == 1 ? "p\($0[0])" : "p\($0.first!)to\($0.last!)" }
        guard Set(labels).count == labels.count else {
            throw ConversionFailure(.unsupportedInput, "split names the same range twice: \(split)")
        }
        var written: [FilePath] = []
        do throws(ConversionFailure) {
            for (index, pages) in groups.enumerated() {
                let output = try Self.run { () throws(PDFError) -> [UInt8] in
                    let part = try PDFDocument()
                    try part.appendPages(pages.map { $0 - 1 }, of: document)
                    if keepMetadata { try part.copyMetadata(from: document) }
                    return try part.write(settings)
                }
                try Self.verify(output, pages: pages.count)
                let part = OutputPart(label: labels[index], bytes: Int64(output.count))
                let path = part.temporaryPath(beside: request.output)
                try TemporaryFile.writeOutput(output, at: path)
                written.append(path)
                report.parts.append(part)
                progress(JobProgress(fraction: 0.5 + 0.5 * Double(index + 1) / Double(groups.count)))
            }
        } catch {
            PDFFiles.remove(written)
            throw error
        }
        report.outputBytes = report.parts.reduce(0) { $0 + $1.bytes }
        return report
    }

    /// Draws each page of `pages` at the rule's `dpi` with poppler, as a PNG, JPEG or WebP (the job's format), each a
    /// part beside `request.output` labelled `p1`, `p2`, … by its page number in the source.
    ///
    /// - Returns: the report with one part per page, `outputBytes` their total, and the details `dpi`,
    ///   `outputPages`, and `outputWidth` and `outputHeight` of the first page.
    /// - Throws: ``ConversionFailure``; `limitExceeded` for more than ``OutputPart/limit`` pages or a page over the
    ///   job's `maxPixels` (by default 100 million pixels). Every image written so far is removed first.
    private static func render(
        _ bytes: [UInt8],
        pages: [Int],
        password: String?,
        request: ConversionRequest,
        report: ConversionReport,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        var report = report
        guard pages.count <= OutputPart.limit else {
            throw ConversionFailure(
                .limitExceeded,
                "\(pages.count) pages would make \(pages.count) images, more than the \(OutputPart.limit) one job may "
                    + "write; choose fewer with pages"
            )
        }
        let labels = pages.map { "p\($0)" }
        guard Set(labels).count == labels.count else {
            throw ConversionFailure(.unsupportedInput, "pages names a page twice, which would make two images of it")
        }
        let dpi = request.options[PDFOptions.dpi] ?? PDFOptions.defaultDPI
        let renderer: PageRenderer
        do throws(PDFError) {
            renderer = try PageRenderer(reading: bytes, password: password)
        } catch {
            throw error.conversionFailure
        }
        var written: [FilePath] = []
        do throws(ConversionFailure) {
            for (index, page) in pages.enumerated() {
                let image = try Self.draw(page, of: renderer, dpi: dpi, request: request, report: &report)
                if index == 0 {
                    report.details["outputWidth"] = String(image.width)
                    report.details["outputHeight"] = String(image.height)
                }
                let part = OutputPart(label: labels[index], bytes: Int64(image.bytes.count))
                let path = part.temporaryPath(beside: request.output)
                try TemporaryFile.writeOutput(image.bytes, at: path)
                written.append(path)
                report.parts.append(part)
                progress(JobProgress(fraction: 0.2 + 0.8 * Double(index + 1) / Double(pages.count)))
            }
        } catch {
            PDFFiles.remove(written)
            throw error
        }
        report.outputBytes = report.parts.reduce(0) { $0 + $1.bytes }
        report.details["dpi"] = OptionValue.number(dpi).description
        report.details["outputPages"] = String(pages.count)
        return report
    }

    /// Draws one page for the job's format: a PNG from cairo, a JPEG or WebP through the image engine's encoder
    /// (at the rule's `quality`), whose warnings go into the report.
    ///
    /// - Throws: ``ConversionFailure``; `outputFailed` when the bytes are not of the format asked for.
    private static func draw(
        _ page: Int,
        of renderer: borrowing PageRenderer,
        dpi: Double,
        request: ConversionRequest,
        report: inout ConversionReport
    ) throws(ConversionFailure) -> (bytes: [UInt8], width: Int, height: Int) {
        let png = request.format.name == "png"
        var image: (bytes: [UInt8], width: Int, height: Int)
        do throws(PDFError) {
            image = try renderer.draw(
                page: page - 1,
                dpi: dpi,
                pixelLimit: request.limits.pixels ?? 100_000_000,
                as: png ? .png : .bgrx
            )
        } catch {
            throw error.conversionFailure
        }
        if !png {
            let encoded = try Self.encode(
                image.bytes,
                width: image.width,
                height: image.height,
                channels: "BGRP",
                format: request.format,
                options: request.options
            )
            image.bytes = encoded.bytes
            report.warnings += encoded.warnings
        }
        let expected: [String: MediaType] = ["png": .png, "jpg": .jpeg, "webp": .webp]
        guard MediaType.sniff(image.bytes.prefix(MediaType.headerLength)) == expected[request.format.name] else {
            throw ConversionFailure(.outputFailed, "the \(request.format.name) of page \(page) is not one")
        }
        return image
    }

    /// Encodes 8-bit pixels, row by row, in `format` through the image engine's encoder (at the rule's `quality`).
    ///
    /// - Parameter channels: ImageMagick's names of the samples of a pixel, in order (`RGB`, `I`, `BGRP`).
    /// - Returns: the file, and ImageMagick's warnings.
    /// - Throws: ``ConversionFailure`` with ImageMagick's message.
    static func encode(
        _ pixels: [UInt8],
        width: Int,
        height: Int,
        channels: String,
        format: TargetFormat,
        options: ConversionOptions
    ) throws(ConversionFailure) -> (bytes: [UInt8], warnings: [String]) {
        try pixels.withUnsafeBytes { buffer in
            Result { () throws(ConversionFailure) in
                try ImageEngine.encode(
                    pixels: buffer,
                    width: width,
                    height: height,
                    channels: channels,
                    format: format,
                    options: options
                )
            }
        }.get()
    }

    /// Reads the page ranges of the rule's `key` and resolves them against a PDF of `count` pages.
    ///
    /// - Throws: `unsupportedInput`, naming the key, when they do not fit the PDF.
    private static func pages<Result>(
        _ text: String,
        in count: Int,
        for key: String,
        _ resolve: (PageRanges, Int) throws(PageRanges.Problem) -> Result
    ) throws(ConversionFailure) -> Result {
        do throws(PageRanges.Problem) {
            return try resolve(try PageRanges(parsing: text), count)
        } catch {
            throw ConversionFailure(.unsupportedInput, "the rule's \(key) do not fit this PDF: \(error.message)")
        }
    }

    /// Reads `output` back with qpdf and checks its page count.
    ///
    /// - Throws: `outputFailed` when it does not open, or has another number of pages.
    private static func verify(_ output: [UInt8], pages: Int) throws(ConversionFailure) {
        let count = try Self.run { () throws(PDFError) -> Int in
            do throws(PDFError) {
                return try PDFDocument(reading: output, password: nil).pageCount()
            } catch {
                throw PDFError(code: .verify, kind: error.kind, function: error.function, message: error.message)
            }
        }
        guard count == pages else {
            throw ConversionFailure(.outputFailed, "the written PDF reads back with \(count) pages, not \(pages)")
        }
    }

    /// Runs qpdf calls, turning their error into the job's failure.
    static func run<Result>(_ body: () throws(PDFError) -> Result) throws(ConversionFailure) -> Result {
        do {
            return try body()
        } catch {
            throw error.conversionFailure
        }
    }
}
