import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The PDF engine on the real daemon, with PDFs written at test time and from the shared corpus: split into ranges,
/// pages kept and turned, compress, metadata strip, pages drawn as PNG, JPEG and WebP, an image made a one-page PDF,
/// and encrypted and damaged files that fail cleanly while the daemon goes on.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PDFEndToEndTests {
    /// A daemon with one PDF rule (its keys indented by four spaces) after the sentinel rule.
    private static func harness(_ keys: String) throws -> DaemonHarness {
        try DaemonHarness(
            afterSentinels: """
                  - name: pdf
                    match: "*.pdf"
                    to: pdf
                    output: ./outbox
                \(keys)
                """
        )
    }

    /// Writes `name` in a staging folder and moves it into the inbox in one rename.
    private static func drop(_ bytes: [UInt8], as name: String, into harness: DaemonHarness) throws {
        let staging = try harness.directory.makeDirectory("staging-\(name)")
        try Data(bytes).write(to: URL(fileURLWithPath: staging.appending(name).string))
        try harness.moveIn([name], from: staging)
    }

    /// The numbered pages `page 1` … `page N`.
    private static func numberedPages(_ count: Int) -> [String] {
        (1...count).map { "page \($0)" }
    }

    /// The page count `pdfinfo` gives.
    private static func pageCount(_ path: FilePath) throws -> Int? {
        let info = try CommandLineTool.run(["pdfinfo", path.string]).standardOutput
        let line = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
        return line.flatMap { Int($0.dropFirst("Pages:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// The text of each page, as `pdftotext` extracts it.
    private static func pageTexts(_ path: FilePath) throws -> [String] {
        let text = try CommandLineTool.run(["pdftotext", "-layout", path.string, "-"]).standardOutput
        return text.split(separator: "\u{0C}", omittingEmptySubsequences: false).dropLast()
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func splitIntoRangesWritesOnePDFPerRangeInOneSidecar() async throws {
        let harness = try Self.harness("    split: \"1-3,4-10\"")
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(PDFFixtures.make(pages: Self.numberedPages(10)), as: "report.pdf", into: harness)

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["report.pdf.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let names = ["report-p1to3.pdf", "report-p4to10.pdf"]
        #expect(sidecar.outputs?.map(\.path) == names.map { harness.outbox.appending($0).string })
        let first = harness.outbox.appending(names[0])
        let second = harness.outbox.appending(names[1])
        #expect(try Self.pageCount(first) == 3)
        #expect(try Self.pageCount(second) == 7)
        #expect(try Self.pageTexts(first) == Self.numberedPages(3))
        #expect(try Self.pageTexts(second) == Array(Self.numberedPages(10)[3...]))
        #expect(sidecar.details["inputPages"] == "10")
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    @Test func splitPagesWritesOnePDFPerPage() async throws {
        let harness = try Self.harness("    split: pages")
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(PDFFixtures.make(pages: Self.numberedPages(3)), as: "memo.pdf", into: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["memo.pdf.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        for page in 1...3 {
            let path = harness.outbox.appending("memo-p\(page).pdf")
            #expect(try Self.pageTexts(path) == ["page \(page)"])
        }
    }

    @Test func pagesAreKeptInTheRulesOrderAndTurned() async throws {
        let harness = try Self.harness(
            """
                pages: "3,1"
                rotate: 90
            """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(PDFFixtures.make(pages: Self.numberedPages(3)), as: "scan.pdf", into: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["scan.pdf.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("scan.pdf")
        #expect(try Self.pageTexts(output) == ["page 3", "page 1"])
        let info = try CommandLineTool.run(["pdfinfo", "-f", "1", "-l", "2", output.string]).standardOutput
        let rotations = info.split(separator: "\n").filter { $0.contains("rot:") }
            .map { $0.split(separator: " ").last.map(String.init) }
        #expect(rotations == ["90", "90"], "\(info)")
    }

    @Test func compressShrinksAndNeverGrowsAFile() async throws {
        let harness = try Self.harness("    compress: true")
        defer { harness.stop() }
        try await harness.start()
        // Uncompressed page content shrinks; a file qpdf already packed at zlib's best level does not, and is kept.
        let loose = PDFFixtures.make(pages: Self.numberedPages(4), filler: 400)
        let packedPath = harness.directory.appending("packed.pdf")
        let loosePath = harness.directory.appending("loose.pdf")
        try Data(loose).write(to: URL(fileURLWithPath: loosePath.string))
        try CommandLineTool.run([
            "qpdf", "--object-streams=generate", "--recompress-flate", "--compression-level=9", loosePath.string,
            packedPath.string,
        ])
        let packed = try [UInt8](Data(contentsOf: URL(fileURLWithPath: packedPath.string)))
        try Self.drop(loose, as: "loose.pdf", into: harness)
        try Self.drop(packed, as: "packed.pdf", into: harness)
        var names = ["loose.pdf", "packed.pdf"]
        let scan = Corpus.folder.appending("pdf/pdf_scanned_image_only.pdf")
        if Corpus.isPresent {
            try Self.drop(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: scan.string))),
                as: "scan.pdf",
                into: harness
            )
            names.append("scan.pdf")
        }

        let sidecars = try await harness.waitForSidecars(names.count)
        for name in names {
            let sidecar = try #require(sidecars["\(name).chute.json"])
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
            let before = try #require(sidecar.details["bytesBefore"].flatMap(Int.init))
            let after = try #require(sidecar.details["bytesAfter"].flatMap(Int.init))
            print(
                "compress \(name): \(before) bytes before, \(after) after; compressed: \(sidecar.details["compressed"] ?? "")"
            )
            #expect(after <= before)
            let output = harness.outbox.appending(name)
            #expect(try Self.pageCount(output) != nil)
            // It still renders.
            try CommandLineTool.run([
                "pdftoppm", "-r", "20", "-f", "1", "-l", "1", "-png", output.string,
                harness.directory.appending("render-\(name)").string,
            ])
        }
        let looseSidecar = try #require(sidecars["loose.pdf.chute.json"])
        #expect(looseSidecar.details["compressed"] == "yes")
        #expect(Int(looseSidecar.details["bytesAfter"] ?? "")! * 4 < loose.count)
        #expect(
            try Self.pageTexts(harness.outbox.appending("loose.pdf")).map { $0.prefix(6) }
                == Self.numberedPages(4).map { $0.prefix(6) }
        )
        let packedSidecar = try #require(sidecars["packed.pdf.chute.json"])
        #expect(packedSidecar.details["compressed"]?.hasPrefix("no: ") == true, "\(packedSidecar.details)")
        let packedOutput = try [UInt8](
            Data(contentsOf: URL(fileURLWithPath: harness.outbox.appending("packed.pdf").string))
        )
        #expect(packedOutput == packed, "a rewrite that is not smaller keeps the source's bytes")
    }

    /// What `pdfimages -list` says of each image: width, height, encoding and resolution.
    private static func images(_ path: FilePath) throws -> [(width: Int, height: Int, encoding: String, ppi: Int)] {
        try CommandLineTool.run(["pdfimages", "-list", path.string]).standardOutput.split(separator: "\n")
            .dropFirst(2).compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count >= 14, let width = Int(fields[3]), let height = Int(fields[4]),
                    let ppi = Int(fields[12])
                else { return nil }
                return (width, height, String(fields[8]), ppi)
            }
    }

    @Test func compressResamplesScannedPagesToTheRulesDPI() async throws {
        let harness = try Self.harness("    compress: true\n    dpi: 100\n    quality: 70")
        defer { harness.stop() }
        try await harness.start()
        // An A4 page scanned at 300 dpi as a JPEG, and the same page in grey stored losslessly (Flate, as qpdf
        // compresses the raw samples), and a page whose image is already at 100 dpi.
        let jpeg = harness.directory.appending("page.jpg")
        try CommandLineTool.run([
            Fixtures.convert, "-size", "2480x3508", "plasma:fractal", "-quality", "90", jpeg.string,
        ])
        let jpegBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: jpeg.string)))
        try Self.drop(
            PDFFixtures.imagePage(
                jpegBytes,
                filter: "/DCTDecode",
                width: 2480,
                height: 3508,
                gray: false,
                points: (595, 842)
            ),
            as: "colour.pdf",
            into: harness
        )
        let gray = harness.directory.appending("page.gray")
        try CommandLineTool.run([
            Fixtures.convert, "-size", "2480x3508", "gradient:white-gray20", "-depth", "8", "gray:\(gray.string)",
        ])
        let raw = harness.directory.appending("raw.pdf")
        let graySamples = try [UInt8](Data(contentsOf: URL(fileURLWithPath: gray.string)))
        try Data(
            PDFFixtures.imagePage(graySamples, filter: nil, width: 2480, height: 3508, gray: true, points: (595, 842))
        )
        .write(to: URL(fileURLWithPath: raw.string))
        let flate = harness.directory.appending("flate.pdf")
        try CommandLineTool.run(["qpdf", "--compress-streams=y", raw.string, flate.string])
        try Self.drop(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: flate.string))),
            as: "gray.pdf",
            into: harness
        )
        let small = harness.directory.appending("small.jpg")
        try CommandLineTool.run([
            Fixtures.convert, "-size", "827x1169", "plasma:fractal", "-quality", "90", small.string,
        ])
        try Self.drop(
            PDFFixtures.imagePage(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: small.string))),
                filter: "/DCTDecode",
                width: 827,
                height: 1169,
                gray: false,
                points: (595, 842)
            ),
            as: "coarse.pdf",
            into: harness
        )
        var expected = [
            ("colour.pdf", 827, 1169, "1 of 1 images to 100 dpi"), ("gray.pdf", 827, 1169, "1 of 1 images to 100 dpi"),
            ("coarse.pdf", 827, 1169, "0 of 1 images to 100 dpi"),
        ]
        if Corpus.isPresent {
            // A real scan: an 800x981 JPEG in an ICC colour space at 150 dpi.
            try Self.drop(
                try [UInt8](
                    Data(
                        contentsOf: URL(
                            fileURLWithPath: Corpus.folder.appending("pdf/pdf_scanned_image_only.pdf").string
                        )
                    )
                ),
                as: "scan.pdf",
                into: harness
            )
            expected.append(("scan.pdf", 533, 654, "1 of 1 images to 100 dpi"))
        }

        let sidecars = try await harness.waitForSidecars(expected.count, timeout: 120)
        for (name, width, height, summary) in expected {
            let sidecar = try #require(sidecars["\(name).chute.json"], "\(sidecars.keys)")
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
            let output = harness.outbox.appending(name)
            let images = try Self.images(output)
            print(
                "resample \(name): \(sidecar.details["bytesBefore"] ?? "") bytes before, \(sidecar.details["bytesAfter"] ?? "") "
                    + "after; \(sidecar.details["imagesResampled"] ?? ""); images \(images)"
            )
            #expect(sidecar.details["imagesResampled"]?.hasPrefix(summary) == true, "\(name): \(sidecar.details)")
            // Within a pixel: the page's size in points is rounded.
            #expect(
                images.count == 1 && abs(images[0].width - width) <= 1 && abs(images[0].height - height) <= 1,
                "\(name): \(images)"
            )
            #expect(images.first?.ppi == 100, "\(name): \(images)")
            #expect(images.first?.encoding == "jpeg")
            // It still renders.
            try CommandLineTool.run([
                "pdftoppm", "-r", "20", "-png", output.string, harness.directory.appending("render-\(name)").string,
            ])
        }
    }

    @Test func stripLeavesNoInfoOrXMP() async throws {
        let harness = try Self.harness("    metadata: strip")
        defer { harness.stop() }
        try await harness.start()
        let metadata = PDFFixtures.Metadata(title: "QuarterlySecrets", author: "JaneDoeAuthor")
        try Self.drop(PDFFixtures.make(pages: ["body text"], metadata: metadata), as: "memo.pdf", into: harness)
        var names = ["memo.pdf"]
        if Corpus.isPresent {
            let path = Corpus.folder.appending("pdf/pdf_xmp_and_info.pdf")
            try Self.drop(
                try [UInt8](Data(contentsOf: URL(fileURLWithPath: path.string))),
                as: "excel.pdf",
                into: harness
            )
            names.append("excel.pdf")
        }

        let sidecars = try await harness.waitForSidecars(names.count)
        for name in names {
            let sidecar = try #require(sidecars["\(name).chute.json"])
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
            #expect(sidecar.details["metadataRemoved"] == "Info, XMP", "\(name): \(sidecar.details)")
            let output = harness.outbox.appending(name)
            let exif = try CommandLineTool.run(["exiftool", "-a", "-G1", output.string]).standardOutput
            let kept = exif.split(separator: "\n").filter { line in
                line.hasPrefix("[XMP")
                    || ["Author", "Title", "Creator", "Producer", "Create Date", "Modify Date"]
                        .contains { line.hasPrefix("[PDF]") && line.contains(" \($0) ") }
            }
            #expect(kept.isEmpty, "\(name): exiftool still finds \(kept)")
            let trailer = try CommandLineTool.run(["qpdf", "--show-object=trailer", output.string]).standardOutput
            #expect(!trailer.contains("/Info"), "\(name): \(trailer)")
            let xref = try CommandLineTool.run(["qpdf", "--show-xref", output.string]).standardOutput
            #expect(!xref.isEmpty)
            let json = try CommandLineTool.run(["qpdf", "--json", "--json-key=qpdf", output.string]).standardOutput
            #expect(!json.contains("/Metadata") && !json.contains("/Author") && !json.contains("/Producer"), "\(name)")
        }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: harness.outbox.appending("memo.pdf").string))
        #expect(
            bytes.range(of: Data("QuarterlySecrets".utf8)) == nil && bytes.range(of: Data("JaneDoeAuthor".utf8)) == nil
        )
        #expect(try Self.pageTexts(harness.outbox.appending("memo.pdf")) == ["body text"])
    }

    @Test func encryptedAndDamagedPDFsFailCleanlyAndTheDaemonGoesOn() async throws {
        let harness = try Self.harness("")
        defer { harness.stop() }
        try await harness.start()
        let plain = harness.directory.appending("plain.pdf")
        let locked = harness.directory.appending("locked.pdf")
        try PDFFixtures.write(at: plain, pages: ["confidential"])
        try CommandLineTool.run(["qpdf", "--encrypt", "user-pw", "owner-pw", "256", "--", plain.string, locked.string])
        try Self.drop(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: locked.string))),
            as: "locked.pdf",
            into: harness
        )
        // A PDF header over noise: nothing qpdf can rebuild a file from.
        let noise = Array("%PDF-1.7\n".utf8) + (0..<8000).map { UInt8(truncatingIfNeeded: ($0 &* 7919) ^ ($0 >> 3)) }
        try Self.drop(noise, as: "noise.pdf", into: harness)

        let failed = try await harness.waitForSidecars(2)
        let lockedSidecar = try #require(failed["locked.pdf.chute.json"], "\(failed.keys)")
        #expect(lockedSidecar.status == .failed)
        #expect(lockedSidecar.error?.code == "encrypted", "\(String(describing: lockedSidecar.error))")
        print("encrypted: \(lockedSidecar.error?.message ?? "")")
        let noiseSidecar = try #require(failed["noise.pdf.chute.json"])
        #expect(noiseSidecar.status == .failed)
        #expect(noiseSidecar.error?.code == "corruptInput", "\(String(describing: noiseSidecar.error))")
        print("damaged: \(noiseSidecar.error?.message ?? "")")
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("locked.pdf").string))
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")

        // The daemon goes on with the next file.
        try Self.drop(PDFFixtures.make(pages: ["after"]), as: "next.pdf", into: harness)
        let all = try await harness.waitForSidecars(3)
        #expect(all["next.pdf.chute.json"]?.status == .completed)
        #expect(try Self.pageTexts(harness.outbox.appending("next.pdf")) == ["after"])
    }

    @Test func pagesBecomePNGJPEGAndWebPImagesAtTheRulesDPI() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: pages-as-png
                    match: "*-png.pdf"
                    to: png
                    pages: "1,3"
                    dpi: 72
                    output: ./outbox
                  - name: pages-as-jpeg
                    match: "*-jpeg.pdf"
                    to: jpg
                    dpi: 36
                    quality: 90
                    output: ./outbox
                  - name: pages-as-webp
                    match: "*-webp.pdf"
                    to: webp
                    dpi: 50
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let deck = PDFFixtures.make(pages: Self.numberedPages(3))
        let reference = harness.directory.appending("reference.pdf")
        try Data(deck).write(to: URL(fileURLWithPath: reference.string))
        for kind in ["png", "jpeg", "webp"] {
            try Self.drop(deck, as: "deck-\(kind).pdf", into: harness)
        }

        let sidecars = try await harness.waitForSidecars(3)
        // 612 × 792 points: 612 × 792 pixels at 72 dpi, 306 × 396 at 36 dpi, 425 × 550 at 50 dpi.
        for (stem, format, ext, dpi, size, pages) in [
            ("deck-png", "PNG", "png", 72.0, (612, 792), [1, 3]),
            ("deck-jpeg", "JPEG", "jpg", 36, (306, 396), [1, 2, 3]),
            ("deck-webp", "WEBP", "webp", 50, (425, 550), [1, 2, 3]),
        ] {
            let sidecar = try #require(sidecars["\(stem).\(ext).chute.json"], "\(sidecars.keys)")
            #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
            #expect(sidecar.engine == "pdf")
            let names = pages.map { "\(stem)-p\($0).\(ext)" }
            #expect(sidecar.outputs?.map(\.path) == names.map { harness.outbox.appending($0).string })
            for (page, name) in zip(pages, names) {
                let path = harness.outbox.appending(name)
                let info = try Fixtures.identify(path)
                #expect(info.width == size.0 && info.height == size.1, "\(name): \(info)")
                try Self.expectDrawn(path, as: format, page: page, of: reference, dpi: dpi)
            }
        }
        #expect(!FileManager.default.fileExists(atPath: harness.outbox.appending("deck-png-p2.png").string))
        #expect(try Fixtures.identify(harness.outbox.appending("deck-jpeg-p1.jpg")).quality == 90)
    }

    @Test func anImageDroppedOnAPDFRuleBecomesAOnePagePDF() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: image-to-pdf
                    match: "*.{jpg,tif}"
                    to: pdf
                    pageSize: letter
                    output: ./outbox
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        // A JPEG stored on its side (EXIF orientation 6), and a 16-bit grey TIFF with alpha, which is decoded.
        let turned = staging.appending("turned.jpg")
        try CommandLineTool.run([Fixtures.convert, "-size", "60x40", "gradient:red-blue", turned.string])
        try CommandLineTool.run(["exiftool", "-q", "-overwrite_original", "-Orientation=6", "-n", turned.string])
        try CommandLineTool.run([
            Fixtures.convert, "-size", "200x100", "gradient:", "-depth", "16", "-alpha", "on",
            staging.appending("scan.tif").string,
        ])
        try harness.moveIn(["turned.jpg", "scan.tif"], from: staging)

        let sidecars = try await harness.waitForSidecars(2)
        for name in ["turned.pdf", "scan.pdf"] {
            let sidecar = try #require(sidecars["\(name).chute.json"], "\(sidecars.keys)")
            #expect(sidecar.status == .completed && sidecar.engine == "pdf", "\(String(describing: sidecar.error))")
            #expect(try Self.pageCount(harness.outbox.appending(name)) == 1)
        }
        // The JPEG as it is, on a page its /Rotate shows upright: portrait, as the photo is.
        let jpeg = harness.outbox.appending("turned.pdf")
        let images = try CommandLineTool.run(["pdfimages", "-list", jpeg.string]).standardOutput
        let row = images.split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
        #expect(row.count > 8 && row[3] == "60" && row[4] == "40" && row[8] == "jpeg", "\(images)")
        let info = try CommandLineTool.run(["pdfinfo", jpeg.string]).standardOutput
        let rotation = info.split(separator: "\n").first { $0.hasPrefix("Page rot:") }?.split(separator: " ").last
        #expect(rotation == "90", "\(info)")
        let drawn = harness.directory.appending("turned")
        try CommandLineTool.run(["pdftoppm", "-r", "10", "-singlefile", "-png", jpeg.string, drawn.string])
        let page = try Fixtures.identify(FilePath(drawn.string + ".png"))
        #expect(page.width == 85 && page.height == 110, "\(page)")
        // The TIFF decoded, grey, stored as a JPEG at the rule's quality (as every photo that is not a JPEG, unless
        // the rule says lossless: true), on a landscape page.
        let tiff = harness.outbox.appending("scan.pdf")
        let list = try CommandLineTool.run(["pdfimages", "-list", tiff.string]).standardOutput
        let tiffRow = list.split(separator: "\n").last?.split(separator: " ").map(String.init) ?? []
        #expect(
            tiffRow.count > 8 && tiffRow[3] == "200" && tiffRow[4] == "100" && tiffRow[5] == "gray"
                && tiffRow[8] == "jpeg",
            "\(list)"
        )
        #expect(try CommandLineTool.run(["pdfinfo", tiff.string]).standardOutput.contains("792 x 612 pts"))
    }

    /// Checks that `path` is a `format` image of the PDF's page drawn at `dpi`: not blank, and as poppler's own
    /// pdftoppm draws it (normalised RMSE under 0.03, which leaves room for JPEG's and WebP's losses).
    private static func expectDrawn(
        _ path: FilePath,
        as format: String,
        page: Int,
        of reference: FilePath,
        dpi: Double
    ) throws {
        let name = path.lastComponent?.string ?? path.string
        #expect(try Fixtures.identify(path).format == format, "\(name)")
        let mean = try CommandLineTool.run([Fixtures.convert, path.string, "-format", "%[fx:mean]", "info:"])
        let brightness = try #require(Double(mean.standardOutput.trimmingCharacters(in: .whitespaces)))
        #expect(brightness < 1 && brightness > 0.9, "\(name): mean \(brightness)")
        let drawn = reference.removingLastComponent().appending("pdftoppm-\(name)")
        try CommandLineTool.run([
            "pdftoppm", "-r", String(Int(dpi)), "-f", String(page), "-l", String(page), "-singlefile", "-png",
            reference.string, drawn.string,
        ])
        let compared = try CommandLineTool.run(
            ["compare-im6.q16", "-metric", "RMSE", path.string, drawn.string + ".png", "null:"],
            check: false
        )
        let difference = compared.standardError.split(separator: "(").last.flatMap { Double($0.dropLast()) }
        #expect(difference.map { $0 < 0.03 } == true, "\(name) differs from pdftoppm's: \(compared.standardError)")
    }

    @Test func aWatermarkShowsOnTheRenderedPageAndTheTextUnderneathStaysSelectable() async throws {
        let harness = try Self.harness(
            """
                watermark: "DRAFT (internal)"
                watermarkPosition: center
                watermarkSize: 0.6
                watermarkOpacity: 0.8
            """
        )
        defer { harness.stop() }
        try await harness.start()
        let memo = PDFFixtures.make(pages: ["page 1", "page 2"])
        let original = harness.directory.appending("original.pdf")
        try Data(memo).write(to: URL(fileURLWithPath: original.string))
        try Self.drop(memo, as: "memo.pdf", into: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["memo.pdf.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("memo.pdf")
        // The original text is still there to select, and so is the watermark's, on each page.
        let texts = try Self.pageTexts(output)
        #expect(texts.count == 2)
        for (index, text) in texts.enumerated() {
            #expect(text.contains("page \(index + 1)") && text.contains("DRAFT (internal)"), "\(text)")
        }
        // The rendered page differs from the original's in the middle, where the watermark is drawn.
        for (name, pdf) in [("before", original), ("after", output)] {
            try CommandLineTool.run([
                "pdftoppm", "-r", "36", "-f", "1", "-l", "1", "-singlefile", "-png", pdf.string,
                harness.directory.appending(name).string,
            ])
        }
        let compared = try CommandLineTool.run(
            [
                "compare-im6.q16", "-metric", "AE", "-fuzz", "10%",
                harness.directory.appending("before.png").string, harness.directory.appending("after.png").string,
                "null:",
            ],
            check: false
        )
        let changed = Int(compared.standardError.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        print("watermark: \(changed) pixels of the 306x396 rendering changed")
        #expect(changed > 500, "the watermark does not show: \(compared.standardError)")
    }

    @Test func anImageWatermarkIsTurnedKeepsItsTransparencyAndLeavesTheTextSelectable() async throws {
        let logo = try TemporaryDirectory(prefix: "logo")
        defer { logo.remove() }
        // 200x100: the top half red, the bottom half transparent.
        let path = logo.appending("logo.png")
        try CommandLineTool.run([
            Fixtures.convert, "-size", "200x100", "xc:none", "-fill", "red", "-draw", "rectangle 0,0 199,49",
            path.string,
        ])
        let harness = try Self.harness(
            """
                watermarkImage: \(path.string)
                watermarkPosition: center
                watermarkSize: 0.5
                watermarkOpacity: 1
                watermarkRotation: 90
            """
        )
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(PDFFixtures.make(pages: ["page 1", "page 2"]), as: "memo.pdf", into: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["memo.pdf.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("memo.pdf")
        let texts = try Self.pageTexts(output)
        #expect(texts.count == 2 && texts[0].contains("page 1") && texts[1].contains("page 2"), "\(texts)")
        // At 72 dpi a pixel is a point. The mark is 306 x 153 points, turned a quarter anticlockwise about the
        // page's centre (306, 396): 153 wide and 306 high, its red half on the left, its transparent half on the
        // right, where the page shows through.
        try CommandLineTool.run([
            "pdftoppm", "-r", "72", "-f", "1", "-l", "1", "-singlefile", "-png", output.string,
            harness.directory.appending("page").string,
        ])
        let page = harness.directory.appending("page.png").string
        var colours: [String] = []
        for (x, y) in [(266, 396), (266, 280), (346, 396), (266, 150), (150, 396)] {
            colours.append(
                try CommandLineTool.run([
                    Fixtures.convert, page, "-format",
                    "%[fx:round(p{\(x),\(y)}.r)]%[fx:round(p{\(x),\(y)}.g)]%[fx:round(p{\(x),\(y)}.b)]", "info:",
                ]).standardOutput
            )
        }
        print("image watermark, page 1 at (266,396) (266,280) (346,396) (266,150) (150,396): \(colours)")
        #expect(colours == ["100", "100", "111", "111", "111"], "\(colours)")
    }

    @Test func thePasswordOfTheRuleOpensAnEncryptedPDFAndIsNeverRecorded() async throws {
        let harness = try Self.harness("    password: user-pw")
        defer { harness.stop() }
        try await harness.start()
        let plain = harness.directory.appending("plain.pdf")
        let locked = harness.directory.appending("locked.pdf")
        try PDFFixtures.write(at: plain, pages: ["confidential"])
        try CommandLineTool.run(["qpdf", "--encrypt", "user-pw", "owner-pw", "256", "--", plain.string, locked.string])
        try Self.drop(
            try [UInt8](Data(contentsOf: URL(fileURLWithPath: locked.string))),
            as: "locked.pdf",
            into: harness
        )

        let sidecar = try #require(try await harness.waitForSidecars(1)["locked.pdf.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        #expect(try Self.pageTexts(harness.outbox.appending("locked.pdf")) == ["confidential"])
        let raw = try String(
            contentsOfFile: harness.outbox.appending("locked.pdf.chute.json").string,
            encoding: .utf8
        )
        #expect(!raw.contains("user-pw"), "the sidecar shows the password")
        let leaks = harness.daemon?.logLines(containing: "user-pw") ?? []
        #expect(leaks.isEmpty, "the log shows the password: \(leaks)")
    }
}
