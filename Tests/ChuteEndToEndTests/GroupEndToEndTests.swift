import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Rules with `groupBy: folder` on the real daemon: a folder of PDFs copied in with `cp -r` becomes one merged PDF
/// in natural name order (at the highest version of its PDFs), a folder of images one PDF with a page for each (each
/// image's size, or A4 with a margin; photos as JPEGs unless the rule says `lossless`) or one looping GIF or WebP, a file added afterwards is reported and starts no job, the `doneSuffix` marker of a folder holds the group back,
/// a damaged file fails its group by name, and a kill -9 leaves exactly one output.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct GroupEndToEndTests {
    /// The sentinel rule, then a rule merging the PDFs of each sub-folder into one PDF in the outbox.
    private static func harness(
        settings: String = "",
        watchOptions: String = "",
        quietPeriod: String = "300ms"
    ) throws -> DaemonHarness {
        try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                  - name: merge
                    match: "*.pdf"
                    to: pdf
                    output: ./outbox
                    groupBy: folder
                """,
            settings: settings,
            quietPeriod: quietPeriod,
            watchOptions: watchOptions
        )
    }

    /// Each file's pages: `1.pdf`, `2.pdf` and `10.pdf`, whose natural order differs from their byte order.
    private static let pages: [(name: String, pages: [String])] = [
        ("10.pdf", ["ten a", "ten b", "ten c"]), ("1.pdf", ["one a", "one b"]), ("2.pdf", ["two"]),
    ]

    /// Writes the fixture PDFs into a staging folder `name` and returns it.
    private static func stage(_ name: String, in harness: DaemonHarness) throws -> FilePath {
        let folder = try harness.directory.makeDirectory("staging/\(name)")
        for (file, pages) in Self.pages {
            try Data(PDFFixtures.make(pages: pages)).write(to: URL(fileURLWithPath: folder.appending(file).string))
        }
        return folder
    }

    /// Copies a staged folder into the inbox as `cp -r` does: the folder first, then its files one by one.
    private static func copyIn(_ folder: FilePath, to harness: DaemonHarness) throws {
        try CommandLineTool.run(["cp", "-r", folder.string, harness.inbox.string])
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

    /// The PDFs in the outbox.
    private static func outputs(of harness: DaemonHarness) -> [String] {
        harness.directory.files(below: "outbox").filter { $0.hasSuffix(".pdf") }
    }

    /// The merged pages in natural name order: 1.pdf, 2.pdf, 10.pdf.
    private static let mergedPages = ["one a", "one b", "two", "ten a", "ten b", "ten c"]

    /// Checks the merged output of the group `name` and its sidecar: every page in order, every input listed in
    /// order with its size and SHA-256.
    private static func checkMerged(_ name: String, sidecar: Sidecar, in harness: DaemonHarness) throws {
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let output = harness.outbox.appending("\(name).pdf")
        #expect(try Self.pageCount(output) == 6)
        #expect(try Self.pageTexts(output) == Self.mergedPages)
        let folder = harness.inbox.appending(name)
        #expect(sidecar.source.path == folder.string)
        let inputs = try #require(sidecar.inputs, "the sidecar lists no inputs")
        #expect(inputs.map(\.path) == ["1.pdf", "2.pdf", "10.pdf"].map { folder.appending($0).string })
        for input in inputs {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: input.path))
            #expect(input.size == Int64(bytes.count))
            let sum = try CommandLineTool.run(["sha256sum", input.path]).standardOutput.prefix(64)
            #expect(input.sha256 == String(sum), "\(input.path)")
        }
        #expect(sidecar.details["inputFiles"] == "3")
    }

    @Test func aFolderCopiedInBecomesOneMergedPDFInNaturalOrder() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["scans.pdf.chute.json"], "\(sidecars.keys)")
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)
        // One output for the folder, none for its files alone.
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    @Test func aFileAddedToATakenGroupIsReportedAndStartsNoJob() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)
        let sidecar = try #require(try await harness.waitForSidecars(1)["scans.pdf.chute.json"])
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)

        let staging = try harness.directory.makeDirectory("late")
        try Data(PDFFixtures.make(pages: ["late"])).write(to: URL(fileURLWithPath: staging.appending("3.pdf").string))
        try FileManager.default.moveItem(
            atPath: staging.appending("3.pdf").string,
            toPath: harness.inbox.appending("scans/3.pdf").string
        )
        let daemon = try #require(harness.daemon)
        let report = try await daemon.waitForLog("A file arrived in a group already taken", "3.pdf")
        print("late file: \(report[0])")
        #expect(report[0].contains("job.id=\(sidecar.jobID)"), "\(report[0])")

        // The sentinel after it: a job for the late file would have been queued before the sentinel's.
        let after = try await harness.waitForSidecars(1)
        #expect(after.count == 1, "\(after.keys)")
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
        #expect(try Self.pageCount(harness.outbox.appending("scans.pdf")) == 6)
        #expect(daemon.logLines(containing: "Job completed", "inbox/scans").count == 1)
    }

    /// A scanner that pauses between pages: a page that lands in the folder after the others, while the folder has
    /// not been quiet for a quiet period, is merged with them, even when every time on the files and the folder is
    /// old (kept by `cp -p`, as `rsync -t`, `unzip` or a file server's clock give them).
    @Test func aPageThatLandsAfterAPauseIsMergedWithTheOthers() async throws {
        let harness = try Self.harness(quietPeriod: "2s")
        defer { harness.stop() }
        // The scanner's folder is there and watched before its pages land, so that each page is an event of its own
        // (a folder copied in whole may be found by a scan after its files are all there, in one look).
        let folder = try harness.directory.makeDirectory("inbox/scans")
        try await harness.start()
        let daemon = try #require(harness.daemon)
        let staged = try Self.stage("scans", in: harness)
        let backdate = ["touch", "-d", "2020-01-01 12:00"]
        try CommandLineTool.run(backdate + Self.pages.map { staged.appending($0.name).string })
        try CommandLineTool.run(["cp", "-p"] + Self.pages.map { staged.appending($0.name).string } + [folder.string])
        try CommandLineTool.run(backdate + [folder.string])
        // The daemon has looked at the first pages, each closed by its writer, and waits for the folder to be quiet:
        // the per-file check that took them at once before would have queued the group here.
        let looked = try await waitUntil("the group looked at") {
            (daemon.logLines(containing: "Group waiting until its folder has been quiet", "inbox/scans")
                + daemon.logLines(containing: "Group queued", "inbox/scans")).first
        }
        print("pause: after the first pages: \(looked)")

        let late = try harness.directory.makeDirectory("staging-late")
        try Data(PDFFixtures.make(pages: ["late"])).write(to: URL(fileURLWithPath: late.appending("3.pdf").string))
        try CommandLineTool.run(backdate + [late.appending("3.pdf").string])
        try CommandLineTool.run(["cp", "-p", late.appending("3.pdf").string, harness.inbox.appending("scans").string])
        try CommandLineTool.run(backdate + [harness.inbox.appending("scans").string])

        let sidecar = try #require(try await harness.waitForSidecars(1)["scans.pdf.chute.json"])
        let pages = try Self.pageTexts(harness.outbox.appending("scans.pdf"))
        print("pause: merged pages: \(pages)")
        #expect(sidecar.status == .completed)
        #expect(pages == ["one a", "one b", "two", "late", "ten a", "ten b", "ten c"])
        #expect(daemon.logLines(containing: "A file arrived in a group already taken").isEmpty)
    }

    @Test func aFoldersDoneMarkerHoldsTheGroupBack() async throws {
        let harness = try Self.harness(watchOptions: "    doneSuffix: .done")
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Self.copyIn(try Self.stage("scans", in: harness), to: harness)

        let waiting = try await daemon.waitForLog("Group waiting for a marker", "scans.done")
        print("before the marker: \(waiting[0])")
        #expect(Self.outputs(of: harness).isEmpty)
        #expect(daemon.logLines(containing: "Job started").isEmpty)

        #expect(FileManager.default.createFile(atPath: harness.inbox.appending("scans.done").string, contents: Data()))
        let sidecarPath = harness.outbox.appending("scans.pdf.chute.json")
        let sidecar = try await waitUntil("the group's sidecar", timeout: 60) {
            try? JSONDecoder().decode(Sidecar.self, from: Data(contentsOf: URL(fileURLWithPath: sidecarPath.string)))
        }
        try Self.checkMerged("scans", sidecar: sidecar, in: harness)
        #expect(Self.outputs(of: harness) == ["scans.pdf"])
    }

    @Test func aDamagedFileFailsItsGroupByName() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        try await harness.start()
        let folder = try Self.stage("mixed", in: harness)
        // Whole by its structure (a header and an end marker), but no PDF qpdf can read.
        try Data("%PDF-1.4\nnot a single object here\n%%EOF\n".utf8)
            .write(to: URL(fileURLWithPath: folder.appending("5.pdf").string))
        try Self.copyIn(folder, to: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["mixed.pdf.chute.json"])
        #expect(sidecar.status == .failed)
        let message = sidecar.error?.message ?? ""
        print("group failure: \(sidecar.error?.code ?? "") \(message)")
        #expect(message.contains("5.pdf (file 3 of 4 of the group)"), "\(message)")
        #expect(sidecar.inputs?.count == 4)
        #expect(Self.outputs(of: harness).isEmpty)
    }

    @Test func killsMidGroupLeaveExactlyOneOutputAfterRestart() async throws {
        let harness = try Self.harness()
        defer { harness.stop() }
        // 1. Killed right after the merged PDF is renamed into place, before its sidecar and journal row.
        try await harness.start(environment: ["CHUTE_TEST_KILL_AFTER_RENAME": "1"])
        try Self.copyIn(try Self.stage("first", in: harness), to: harness)
        let killed = try await #require(harness.daemon).waitForExit(timeout: 60)
        #expect(killed.signalled, "the crash point killed the daemon")
        #expect(Self.outputs(of: harness) == ["first.pdf"])

        // 2. Killed from outside as the next group's job starts.
        try await harness.start()
        let daemon = try #require(harness.daemon)
        try Self.copyIn(try Self.stage("second", in: harness), to: harness)
        _ = try await daemon.waitForLog("Job started", "inbox/second")
        daemon.send(SIGKILL)
        _ = try await daemon.waitForExit(timeout: 30)

        // 3. A restart completes the first from the journal and finishes the second, once each.
        try await harness.start()
        let sidecars = try await harness.waitForSidecars(2, timeout: 120)
        for name in ["first", "second"] {
            let sidecar = try #require(sidecars["\(name).pdf.chute.json"], "\(sidecars.keys)")
            try Self.checkMerged(name, sidecar: sidecar, in: harness)
        }
        let outputs = Self.outputs(of: harness)
        print("kill test: outputs \(outputs)")
        #expect(outputs == ["first.pdf", "second.pdf"])
        #expect(harness.temporaryFiles().isEmpty, "\(harness.temporaryFiles())")
    }

    /// The size of each page in points, as `pdfinfo` gives them.
    private static func pageSizes(_ path: FilePath, pages: Int) throws -> [(Double, Double)] {
        let info = try CommandLineTool.run(["pdfinfo", "-f", "1", "-l", String(pages), path.string]).standardOutput
        return info.split(separator: "\n").filter { $0.hasPrefix("Page ") && $0.contains(" size: ") }.compactMap {
            let words = $0.split(separator: ":")[1].split(separator: " ")
            guard words.count >= 3, let width = Double(words[0]), let height = Double(words[2]) else { return nil }
            return (width, height)
        }
    }

    @Test func aFolderOfImagesBecomesOnePDFWithAPageForEachImage() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: sheets
                    match: "a4-*.{jpg,png,pdf}"
                    to: pdf
                    pageSize: a4
                    margin: 10mm
                    output: ./outbox
                    groupBy: folder
                  - name: photos
                    match: "*.{jpg,png}"
                    to: pdf
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // Twelve images of different sizes, JPEG and PNG in turn; the third says 144 dpi, the others nothing.
        let photos = try harness.directory.makeDirectory("staging/photos")
        var expected: [(name: String, width: Int, height: Int, points: (Double, Double))] = []
        for index in 1...12 {
            let (width, height) = (40 + 8 * index, 30 + 6 * index)
            let name = "\(index).\(index.isMultiple(of: 2) ? "png" : "jpg")"
            let density = index == 3 ? ["-units", "PixelsPerInch", "-density", "144"] : []
            try CommandLineTool.run(
                [Fixtures.convert, "-size", "\(width)x\(height)", "gradient:navy-orange"] + density
                    + [photos.appending(name).string]
            )
            let scale = index == 3 ? 0.5 : 1
            expected.append((name, width, height, (Double(width) * scale, Double(height) * scale)))
        }
        // For A4 with a margin: a portrait JPEG, a PDF page (kept as it is), a landscape PNG.
        let sheets = try harness.directory.makeDirectory("staging/sheets")
        for (name, size) in [("a4-1.jpg", "300x400"), ("a4-3.png", "400x300")] {
            try CommandLineTool.run([Fixtures.convert, "-size", size, "plasma:", sheets.appending(name).string])
        }
        try Data(PDFFixtures.make(pages: ["letter"])).write(
            to: URL(fileURLWithPath: sheets.appending("a4-2.pdf").string)
        )
        try Self.copyIn(photos, to: harness)
        try Self.copyIn(sheets, to: harness)

        let sidecars = try await harness.waitForSidecars(2)
        let sidecar = try #require(sidecars["photos.pdf.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let folder = harness.inbox.appending("photos")
        #expect(sidecar.inputs?.map(\.path) == expected.map { folder.appending($0.name).string })
        #expect(sidecar.inputs?.allSatisfy { $0.sha256?.count == 64 && $0.size > 0 } == true)
        let output = harness.outbox.appending("photos.pdf")
        #expect(try Self.pageCount(output) == 12)
        // In natural name order, each page the image's size at its resolution (72 dpi when it gives none).
        let sizes = try Self.pageSizes(output, pages: 12)
        #expect(sizes.count == 12)
        for (size, image) in zip(sizes, expected) {
            #expect(
                abs(size.0 - image.points.0) < 0.01 && abs(size.1 - image.points.1) < 0.01,
                "\(image.name): \(size)"
            )
        }
        // The JPEGs stored as they are (DCT, the same bytes), the PNGs as JPEGs too; all at their own size.
        let list = try CommandLineTool.run(["pdfimages", "-list", output.string]).standardOutput
        let rows = list.split(separator: "\n").dropFirst(2).map { $0.split(separator: " ").map(String.init) }
        #expect(rows.count == 12, "\(list)")
        for (row, image) in zip(rows, expected) {
            #expect(row[3] == String(image.width) && row[4] == String(image.height) && row[8] == "jpeg", "\(row)")
        }
        let extracted = harness.directory.appending("extracted")
        try CommandLineTool.run(["pdfimages", "-j", "-f", "1", "-l", "1", output.string, extracted.string])
        let first = try Data(contentsOf: URL(fileURLWithPath: folder.appending("1.jpg").string))
        #expect(try Data(contentsOf: URL(fileURLWithPath: extracted.string + "-000.jpg")) == first)
        print("images to PDF: \(list)")

        // A4 with a margin: the pages turn with the images, and the PDF's page is kept as it is.
        let a4 = try #require(sidecars["sheets.pdf.chute.json"], "\(sidecars.keys)")
        #expect(a4.status == .completed, "\(String(describing: a4.error))")
        let sheetsOutput = harness.outbox.appending("sheets.pdf")
        let sheetSizes = try Self.pageSizes(sheetsOutput, pages: 3).map {
            "\(Int($0.0.rounded()))x\(Int($0.1.rounded()))"
        }
        #expect(sheetSizes == ["595x842", "612x792", "842x595"], "\(sheetSizes)")
        #expect(try Self.pageTexts(sheetsOutput) == ["", "letter", ""])
        print("A4 with a 10mm margin: pages \(sheetSizes)")
    }

    @Test func aMergeKeepsTheHighestPDFVersionAndPhotosGoInAsJPEGUnlessTheRuleSaysLossless() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: lossless
                    match: "lossless-*.png"
                    to: pdf
                    lossless: true
                    output: ./outbox
                    groupBy: folder
                  - name: albums
                    match: "*.{png,pdf}"
                    to: pdf
                    quality: 80
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // Photo-like pictures (plasma noise), as PNGs: the same ones for both albums.
        let album = try harness.directory.makeDirectory("staging/album")
        let lossless = try harness.directory.makeDirectory("staging/lossless")
        var pngBytes = 0
        for index in 1...3 {
            let name = "\(index).png"
            try CommandLineTool.run([
                Fixtures.convert, "-seed", "\(index)", "-size", "600x400", "plasma:", album.appending(name).string,
            ])
            try FileManager.default.copyItem(
                atPath: album.appending(name).string,
                toPath: lossless.appending("lossless-\(name)").string
            )
            pngBytes += try Data(contentsOf: URL(fileURLWithPath: album.appending(name).string)).count
        }
        // A PDF 1.4 and a PDF 1.7, merged.
        let merge = try harness.directory.makeDirectory("staging/merge")
        try Data(PDFFixtures.make(pages: ["old"])).write(to: URL(fileURLWithPath: merge.appending("1.pdf").string))
        let plain = harness.directory.appending("plain.pdf")
        try Data(PDFFixtures.make(pages: ["new"])).write(to: URL(fileURLWithPath: plain.string))
        try CommandLineTool.run(["qpdf", "--force-version=1.7", plain.string, merge.appending("2.pdf").string])
        for folder in [album, lossless, merge] {
            try Self.copyIn(folder, to: harness)
        }

        let sidecars = try await harness.waitForSidecars(3, timeout: 120)
        for name in ["album", "lossless", "merge"] {
            let sidecar = try #require(sidecars["\(name).pdf.chute.json"], "\(sidecars.keys)")
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
        }
        let merged = try Data(contentsOf: URL(fileURLWithPath: harness.outbox.appending("merge.pdf").string))
        let header = String(decoding: merged.prefix(8), as: UTF8.self)
        #expect(header == "%PDF-1.7", "\(header)")
        #expect(try Self.pageTexts(harness.outbox.appending("merge.pdf")) == ["old", "new"])
        func encodings(_ name: String) throws -> [String] {
            let list = try CommandLineTool.run(["pdfimages", "-list", harness.outbox.appending(name).string])
            return list.standardOutput.split(separator: "\n").dropFirst(2).map {
                String($0.split(separator: " ")[8])
            }
        }
        #expect(try encodings("album.pdf") == ["jpeg", "jpeg", "jpeg"])
        #expect(try encodings("lossless.pdf") == ["image", "image", "image"])
        let albumBytes = try Data(contentsOf: URL(fileURLWithPath: harness.outbox.appending("album.pdf").string)).count
        let losslessBytes = try Data(contentsOf: URL(fileURLWithPath: harness.outbox.appending("lossless.pdf").string))
            .count
        #expect(albumBytes < pngBytes / 2, "album \(albumBytes) bytes from \(pngBytes) bytes of PNGs")
        print("3 PNGs \(pngBytes) bytes: album \(albumBytes) bytes, lossless \(losslessBytes) bytes; merge \(header)")
    }

    /// The loop count an animation's file gives (0: forever): after GIF's `NETSCAPE2.0` application extension, or in
    /// WebP's `ANIM` chunk; `nil` when it has none.
    private static func loopCount(_ path: FilePath) throws -> Int? {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path.string)))
        for (marker, offset) in [("NETSCAPE2.0", 13), ("ANIM", 12)] {
            let tag = Array(marker.utf8)
            guard
                let start = (0...(bytes.count - tag.count)).first(where: {
                    bytes[$0..<($0 + tag.count)].elementsEqual(tag)
                }),
                start + offset + 1 < bytes.count
            else { continue }
            return Int(bytes[start + offset]) | Int(bytes[start + offset + 1]) << 8
        }
        return nil
    }

    @Test func aFolderOfImagesBecomesALoopingAnimation() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: gif
                    match: "g-*.{png,jpg}"
                    to: gif
                    frameDelay: 200ms
                    output: ./outbox
                    groupBy: folder
                  - name: webp
                    match: "w-*.{png,jpg}"
                    to: webp
                    width: 60
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // Red, green and blue images of different sizes, whose natural order (1, 2, 10) is not their byte order.
        for (folder, prefix) in [("cards", "g"), ("stickers", "w")] {
            let staging = try harness.directory.makeDirectory("staging/\(folder)")
            for (name, size, colour) in [
                ("1.png", "80x60", "red"), ("2.jpg", "40x40", "lime"), ("10.png", "160x60", "blue"),
            ] {
                try CommandLineTool.run([
                    Fixtures.convert, "-size", size, "xc:\(colour)", staging.appending("\(prefix)-\(name)").string,
                ])
            }
            try Self.copyIn(staging, to: harness)
        }

        let sidecars = try await harness.waitForSidecars(2)
        // Each frame on a canvas of the first image's size (bounded by width for the WebP; its encoder stores only
        // the part of a frame that is not transparent, so the canvas is what is compared), shown for the delay, in
        // name order.
        for (name, width, height, delay) in [("cards.gif", 80, 60, "20"), ("stickers.webp", 60, 45, "50")] {
            let sidecar = try #require(sidecars["\(name).chute.json"], "\(sidecars.keys)")
            #expect(sidecar.status == .completed && sidecar.engine == "image", "\(String(describing: sidecar.error))")
            #expect(sidecar.inputs?.count == 3 && sidecar.details["inputFiles"] == "3")
            let output = harness.outbox.appending(name)
            let frames = try CommandLineTool.run([
                Fixtures.identify, "-format", "%W %H %T\n", output.string,
            ]).standardOutput.split(separator: "\n")
            #expect(frames == Array(repeating: "\(width) \(height) \(delay)", count: 3), "\(name): \(frames)")
            let (x, y) = (width / 2, height / 2)
            let colours = try CommandLineTool.run([
                Fixtures.convert, output.string, "-format",
                "%[fx:round(p{\(x),\(y)}.r)]%[fx:round(p{\(x),\(y)}.g)]%[fx:round(p{\(x),\(y)}.b)] ", "info:",
            ]).standardOutput
            #expect(colours == "100 010 001 ", "\(name): \(colours)")
            #expect(try Self.loopCount(output) == 0, "\(name) does not loop forever")
            print("animation \(name): frames \(frames), centre colours \(colours)")
        }
    }

    @Test func aFolderOfImagesBecomesAContactSheet() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: sheet
                    match: "*.{png,jpg}"
                    to: jpg
                    tiles: 3x2
                    width: 300
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // Five images in natural order 1, 2, 3, 4, 10: the last is portrait and is fitted into its cell; the sixth
        // cell stays empty (white).
        let staging = try harness.directory.makeDirectory("staging/roll")
        let images = [
            ("1.png", "200x150", "red"), ("2.jpg", "100x75", "lime"), ("3.png", "400x300", "blue"),
            ("4.jpg", "200x150", "yellow"), ("10.png", "150x200", "magenta"),
        ]
        for (name, size, colour) in images {
            try CommandLineTool.run([Fixtures.convert, "-size", size, "xc:\(colour)", staging.appending(name).string])
        }
        try Self.copyIn(staging, to: harness)

        let sidecars = try await harness.waitForSidecars(1)
        let sidecar = try #require(sidecars["roll.jpg.chute.json"], "\(sidecars.keys)")
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        print("contact sheet: \(sidecar.details)")
        #expect(sidecar.details["inputFiles"] == "5" && sidecar.details["tiles"] == "3x2")
        let output = harness.outbox.appending("roll.jpg")
        // Cells of the first image's shape within 300/3 pixels: 100x75; the sheet 300x150.
        let info = try Fixtures.identify(output)
        #expect(info.width == 300 && info.height == 150, "\(info)")
        var colours: [String] = []
        for (x, y) in [(50, 37), (150, 37), (250, 37), (50, 112), (150, 112), (250, 112), (115, 112)] {
            colours.append(
                try CommandLineTool.run([
                    Fixtures.convert, output.string, "-format",
                    "%[fx:round(p{\(x),\(y)}.r)]%[fx:round(p{\(x),\(y)}.g)]%[fx:round(p{\(x),\(y)}.b)]", "info:",
                ]).standardOutput
            )
        }
        print("contact sheet cells: \(colours)")
        // Red, lime, blue, yellow, magenta (its cell's centre), white (empty), white (beside the portrait image).
        #expect(colours == ["100", "010", "001", "110", "101", "111", "111"], "\(colours)")
    }

    @Test func aPhoneHEICDecodedAsYCbCrKeepsItsColoursOnAContactSheet() async throws {
        guard Corpus.isPresent else { return }
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: sheet
                    match: "*.heic"
                    to: png
                    tiles: 2x1
                    output: ./outbox
                    groupBy: folder
                """
        )
        defer { harness.stop() }
        try await harness.start()
        // ImageMagick decodes this Xiaomi HEIC as YCbCr; laid on the sheet's sRGB canvas as it is, it turned pink.
        let heic = Corpus.folder.appending("image/heic_xiaomi.heic")
        let staging = try harness.directory.makeDirectory("staging/phone")
        try CommandLineTool.run(["cp", heic.string, staging.appending("1.heic").string])
        try CommandLineTool.run(["cp", heic.string, staging.appending("2.heic").string])
        try Self.copyIn(staging, to: harness)

        let sidecar = try #require(try await harness.waitForSidecars(1)["phone.png.chute.json"])
        #expect(sidecar.status == .completed, "\(String(describing: sidecar.error))")
        let cell = try #require(sidecar.details["cellWidth"].flatMap(Int.init))
        let mean = "%[fx:mean.r] %[fx:mean.g] %[fx:mean.b]"
        let sheet = try CommandLineTool.run([
            Fixtures.convert, harness.outbox.appending("phone.png").string, "-crop", "\(cell)x100000+0+0", "-format",
            mean, "info:",
        ]).standardOutput
        let reference = try CommandLineTool.run([
            Fixtures.convert, heic.string, "-auto-orient", "-colorspace", "sRGB", "-format", mean, "info:",
        ]).standardOutput
        let channels = [sheet, reference].map { $0.split(separator: " ").compactMap { Double($0) } }
        print("YCbCr HEIC on a contact sheet: mean RGB \(channels[0]), convert's \(channels[1])")
        #expect(channels[0].count == 3 && channels[1].count == 3)
        for (ours, theirs) in zip(channels[0], channels[1]) {
            #expect(abs(ours - theirs) < 0.03, "\(channels)")
        }
    }
}
