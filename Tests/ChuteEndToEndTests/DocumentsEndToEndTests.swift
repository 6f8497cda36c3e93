import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real daemon converts documents through LibreOffice (issue 13 §1): documents written at test time and from
/// the corpus become PDFs with their pages and text, DOCX and back; a document that outlasts its job's timeout, or
/// whose worker is killed, costs that job only and leaves no LibreOffice behind; a web page's remote resources are
/// never fetched.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct DocumentsEndToEndTests {
    /// A rule per target format, each taking the inbox files named `*-to-FORMAT.*`.
    private static func rules(_ formats: [String], extra: String = "") -> String {
        formats.map { format in
            """
              - name: to-\(format)
                match: "*-to-\(format).*"
                to: \(format)
                output: ./outbox
            \(extra)
            """
        }.joined(separator: "\n")
    }

    /// The text of a PDF, as `pdftotext` extracts it.
    private static func text(ofPDF path: FilePath) throws -> String {
        try CommandLineTool.run(["pdftotext", "-enc", "UTF-8", path.string, "-"]).standardOutput
    }

    /// The page count `pdfinfo` reads.
    private static func pages(ofPDF path: FilePath) throws -> Int? {
        let info = try CommandLineTool.run(["pdfinfo", path.string]).standardOutput
        let line = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
        return line.flatMap { Int($0.dropFirst("Pages:".count).trimmingCharacters(in: .whitespaces)) }
    }

    /// The XML of a ZIP member (`word/document.xml` of a DOCX), read with Python's zipfile.
    private static func member(_ name: String, of path: FilePath) throws -> String {
        try CommandLineTool.run([
            "python3", "-c",
            "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]).decode())",
            path.string, name,
        ]).standardOutput
    }

    /// Moves files made in a staging folder into the inbox.
    private static func drop(_ files: [String: Data], into harness: DaemonHarness) throws {
        let staging = try harness.directory.makeDirectory("staging-\(UUID().uuidString.prefix(8))")
        for (name, bytes) in files {
            try bytes.write(to: URL(fileURLWithPath: staging.appending(name).string))
        }
        try harness.moveIn(Array(files.keys).sorted(), from: staging)
    }

    @Test func documentsWrittenAtTestTimeBecomePDFsWithTheirPagesAndText() async throws {
        let harness = try DaemonHarness(afterSentinels: Self.rules(["pdf"]))
        defer { harness.stop() }
        try await harness.start()
        try Self.drop(
            [
                "notes-to-pdf.txt": Data("Plain text notes\nGrüße aus Köln, second line\n".utf8),
                "letter-to-pdf.rtf": Data(
                    #"{\rtf1\ansi{\fonttbl\f0\fswiss DejaVu Sans;}\f0\pard Rich text letter\par\page Second page of RTF\par}"#
                        .utf8
                ),
                "page-to-pdf.html": Data(
                    ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head><body><h1>Web page "
                        + "title</h1><p>Paragraph of the café page</p></body></html>").utf8
                ),
                "report-to-pdf.docx": try DocumentFixtures.docx(
                    paragraphs: ["Word report page one"],
                    secondPage: "Word report page two"
                ),
                "memo-to-pdf.odt": try DocumentFixtures.odt(paragraphs: ["OpenDocument memo text"]),
            ],
            into: harness
        )
        let sidecars = try await harness.waitForSidecars(5, timeout: 240)
        let expected: [(name: String, pages: Int, texts: [String])] = [
            ("notes-to-pdf.txt", 1, ["Plain text notes", "Grüße aus Köln, second line"]),
            ("letter-to-pdf.rtf", 2, ["Rich text letter", "Second page of RTF"]),
            ("page-to-pdf.html", 1, ["Web page title", "Paragraph of the café page"]),
            ("report-to-pdf.docx", 2, ["Word report page one", "Word report page two"]),
            ("memo-to-pdf.odt", 1, ["OpenDocument memo text"]),
        ]
        for file in expected {
            let stem = String(file.name[..<file.name.lastIndex(of: ".")!])
            let sidecar = try #require(
                sidecars["\(stem).pdf.chute.json"],
                "no sidecar for \(file.name): \(sidecars.keys.sorted())"
            )
            #expect(sidecar.status == .completed, "\(file.name): \(String(describing: sidecar.error))")
            #expect(sidecar.engine == "document")
            #expect(sidecar.details["pages"] == "\(file.pages)")
            let pdf = harness.outbox.appending("\(stem).pdf")
            #expect(try Self.pages(ofPDF: pdf) == file.pages, "\(file.name)")
            let text = try Self.text(ofPDF: pdf)
            for expectedText in file.texts {
                #expect(text.contains(expectedText), "\(file.name): \(text)")
            }
        }
    }

    @Test func wordDocumentsConvertBetweenFormatsAndOfficeFilesFromTheCorpusBecomePDFs() async throws {
        try #require(Corpus.isPresent, "the corpus is missing at \(Corpus.folder)")
        let harness = try DaemonHarness(afterSentinels: Self.rules(["pdf", "docx", "odt", "txt"]))
        defer { harness.stop() }
        try await harness.start()
        func corpus(_ path: String) throws -> Data {
            try Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(path).string))
        }
        try Self.drop(
            [
                "memo-to-docx.odt": try DocumentFixtures.odt(paragraphs: ["OpenDocument memo for Word"]),
                "form-to-docx.doc": try corpus("document/doc_form_fields.doc"),
                "report-to-odt.docx": try DocumentFixtures.docx(paragraphs: ["Word report for ODF"], secondPage: nil),
                "page-to-txt.html": Data("<html><body><p>Web text to plain text</p></body></html>".utf8),
                "tables-to-pdf.docx": try corpus("document/docx_tables.docx"),
                "sheet-to-pdf.xlsx": try corpus("document/xlsx_excel.xlsx"),
                "calc-to-pdf.ods": try corpus("document/ods_calc.ods"),
                "slides-to-pdf.pptx": try corpus("document/pptx_realworld.pptx"),
                "impress-to-pdf.odp": try corpus("document/odp_impress.odp"),
                "sheet-to-docx.xlsx": try corpus("document/xlsx_excel.xlsx"),
                "locked-to-pdf.docx": try corpus("document/docx_encrypted_password.docx"),
            ],
            into: harness
        )
        let sidecars = try await harness.waitForSidecars(11, timeout: 300)
        func succeeded(_ name: String) throws -> FilePath {
            let sidecar = try #require(
                sidecars["\(name).chute.json"],
                "no sidecar for \(name): \(sidecars.keys.sorted())"
            )
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
            return harness.outbox.appending(name)
        }
        #expect(
            try Self.member("word/document.xml", of: try succeeded("memo-to-docx.docx")).contains(
                "OpenDocument memo for Word"
            )
        )
        let form = try Self.member("word/document.xml", of: try succeeded("form-to-docx.docx"))
        #expect(form.contains("Travel"), "the Word 97 form's text is in the DOCX")
        #expect(try Self.member("content.xml", of: try succeeded("report-to-odt.odt")).contains("Word report for ODF"))
        let plain = try String(contentsOfFile: try succeeded("page-to-txt.txt").string, encoding: .utf8)
        #expect(plain.contains("Web text to plain text"))
        for name in ["tables-to-pdf", "sheet-to-pdf", "calc-to-pdf", "slides-to-pdf", "impress-to-pdf"] {
            let pdf = try succeeded("\(name).pdf")
            let pages = try Self.pages(ofPDF: pdf)
            #expect((pages ?? 0) >= 1, "\(name)")
            #expect(!(try Self.text(ofPDF: pdf)).trimmingCharacters(in: .whitespacesAndNewlines).isEmpty, "\(name)")
        }
        let refused = try #require(sidecars["sheet-to-docx.docx.chute.json"])
        #expect(refused.status == .failed)
        #expect(refused.error?.code == "unsupportedInput")
        #expect(refused.error?.message.contains("converts only to pdf") == true)
        // A password-protected document fails at once, as such: LibreOffice, in batch mode, asks for no password.
        let locked = try #require(sidecars["locked-to-pdf.pdf.chute.json"])
        #expect(locked.status == .failed)
        #expect(locked.error?.code == "encrypted", "\(String(describing: locked.error))")
    }

    @Test func aDocumentWorkerKeepsLibreOfficeForItsJobsAndIsReplacedAfterWorkerJobs() async throws {
        let harness = try DaemonHarness(
            rules: """
                  - name: sentinels
                    match: "zz-sentinel-*.png"
                    to: jpg
                    output: ./outbox
                \(Self.rules(["pdf"]))
                """,
            settings: """
                  workerJobs: 2
                  concurrency: {document: 1}
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        var workers: [Int32] = []
        for index in 1...3 {
            let name = "note\(index)-to-pdf.txt"
            try Self.drop([name: Data("Note number \(index)\n".utf8)], into: harness)
            try await harness.waitForSidecars(index, timeout: 120)
            workers.append(try Self.workerPID(of: name, in: daemon))
        }
        // The first worker ran two jobs with LibreOffice loaded once; the third job had a new worker.
        #expect(workers[0] == workers[1], "\(workers)")
        #expect(workers[2] != workers[1], "\(workers)")
        for index in 1...3 {
            let pdf = harness.outbox.appending("note\(index)-to-pdf.pdf")
            #expect(try Self.text(ofPDF: pdf).contains("Note number \(index)"))
        }
    }

    @Test func aDocumentPastItsTimeoutOrAKilledWorkerFailsOnlyItsJobAndLeavesNoLibreOffice() async throws {
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: slow
                    match: "slow-*.txt"
                    to: pdf
                    output: ./outbox
                    jobTimeout: 4s
                \(Self.rules(["pdf"]))
                """
        )
        defer { harness.stop() }
        try await harness.start()
        let daemon = try #require(harness.daemon)
        // Thousands of pages of text: LibreOffice lays them out for far longer than 4 s.
        let long = Data(
            (0..<40_000).map { "Line \($0) of a document long enough to outlast its job's timeout.\n" }.joined().utf8
        )
        try Self.drop(["slow-book.txt": long], into: harness)
        let timedOut = try await waitUntil("the slow document's sidecar", timeout: 120) {
            harness.sidecars()["slow-book.pdf.chute.json"]
        }
        #expect(timedOut.status == .failed)
        #expect(timedOut.error?.code == "timedOut", "\(String(describing: timedOut.error))")
        let first = try Self.workerPID(of: "slow-book.txt", in: daemon)

        // A worker killed in the middle of a long job.
        try Self.drop(["killed-to-pdf.txt": long], into: harness)
        let started = try await daemon.waitForLog("Job started", "killed-to-pdf.txt", timeout: 120)
        let second = try #require(started.first.flatMap { Logfmt.parse($0)?["worker.pid"] }.flatMap { Int32($0) })
        #expect(kill(second, SIGKILL) == 0)
        let crashed = try await waitUntil("the killed job's sidecar", timeout: 120) {
            harness.sidecars()["killed-to-pdf.pdf.chute.json"]
        }
        #expect(crashed.status == .failed)
        #expect(crashed.error?.code == "workerCrashed", "\(String(describing: crashed.error))")

        // Both workers are gone with their whole process groups, and the next document converts.
        for worker in [first, second] {
            try await waitUntil("worker \(worker)'s process group to end", timeout: 30) {
                kill(-worker, 0) != 0 && errno == ESRCH && kill(worker, 0) != 0 ? true : nil
            }
        }
        try Self.drop(["after-to-pdf.txt": Data("The next document converts\n".utf8)], into: harness)
        let sidecars = try await harness.waitForSidecars(3, timeout: 120)
        let after = try #require(sidecars["after-to-pdf.pdf.chute.json"])
        #expect(after.status == .completed, "\(String(describing: after.error))")
        #expect(
            try Self.text(ofPDF: harness.outbox.appending("after-to-pdf.pdf")).contains("The next document converts")
        )
        let third = try Self.workerPID(of: "after-to-pdf.txt", in: daemon)
        let soffice = try Self.soffice()
        #expect(soffice.isEmpty, "no soffice process: \(soffice)")

        // Stopping the daemon ends the worker that holds LibreOffice.
        daemon.send(SIGTERM)
        _ = try await daemon.waitForExit(timeout: 60)
        try await waitUntil("the last worker to end", timeout: 30) {
            kill(third, 0) != 0 && errno == ESRCH ? true : nil
        }
        #expect(try Self.soffice().isEmpty)
    }

    @Test func aWebPageAndAWordDocumentWithRemoteImagesConvertWithoutAConnection() async throws {
        let listener = try LoopbackListener()
        defer { listener.stop() }
        try await listener.checkThatItCounts()
        let remote = "http://127.0.0.1:\(listener.port)"
        let harness = try DaemonHarness(afterSentinels: Self.rules(["pdf"]))
        defer { harness.stop() }
        try await harness.start()
        let page = """
            <!DOCTYPE html><html><head><link rel="stylesheet" href="\(remote)/style.css">
            <script src="\(remote)/script.js"></script></head>
            <body><h1>Remote resources</h1><img src="\(remote)/picture.png" width="100" height="100">
            <iframe src="\(remote)/frame.html"></iframe><p>Text beside them</p></body></html>
            """
        try Self.drop(
            [
                "remote-to-pdf.html": Data(page.utf8),
                "linked-to-pdf.docx": try DocumentFixtures.docx(
                    paragraphs: ["Word document with a linked picture"],
                    secondPage: nil,
                    linkedImage: "\(remote)/linked.png"
                ),
            ],
            into: harness
        )
        let sidecars = try await harness.waitForSidecars(2, timeout: 240)
        for name in ["remote-to-pdf", "linked-to-pdf"] {
            let sidecar = try #require(sidecars["\(name).pdf.chute.json"], "\(sidecars.keys.sorted())")
            #expect(sidecar.status == .completed, "\(name): \(String(describing: sidecar.error))")
        }
        #expect(try Self.text(ofPDF: harness.outbox.appending("remote-to-pdf.pdf")).contains("Text beside them"))
        #expect(listener.connections == 0, "requests: \(listener.requests)")
    }

    /// The worker that ran `name`, from the supervisor's `Job started` line.
    private static func workerPID(of name: String, in daemon: ChuteProcess) throws -> Int32 {
        let line = try #require(daemon.logLines(containing: "Job started", name).first)
        return try #require(Logfmt.parse(line)?["worker.pid"].flatMap { Int32($0) })
    }

    /// The `soffice` processes on the machine (LibreOfficeKit runs none: LibreOffice lives in the worker).
    private static func soffice() throws -> [String] {
        let result = try CommandLineTool.run(["ps", "-C", "soffice.bin,soffice", "-o", "pid=,args="], check: false)
        return result.standardOutput.split(separator: "\n").map(String.init)
    }
}

/// Office documents written by hand: the smallest DOCX and ODT that Word and LibreOffice open.
enum DocumentFixtures {
    /// A DOCX with `paragraphs`, then a page break and `secondPage` if given, and a picture linked (not embedded) from
    /// `linkedImage` if given.
    static func docx(paragraphs: [String], secondPage: String?, linkedImage: String? = nil) throws -> Data {
        var body = paragraphs.map { "<w:p><w:r><w:t>\($0)</w:t></w:r></w:p>" }.joined()
        if let secondPage {
            body += "<w:p><w:r><w:br w:type=\"page\"/><w:t>\(secondPage)</w:t></w:r></w:p>"
        }
        var relationships = ""
        if let linkedImage {
            relationships =
                "<Relationship Id=\"rIdImage\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/image\" "
                + "Target=\"\(linkedImage)\" TargetMode=\"External\"/>"
            body += """
                <w:p><w:r><w:drawing><wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="1" name="Picture"/>\
                <a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>\
                <pic:nvPicPr><pic:cNvPr id="1" name="linked.png"/><pic:cNvPicPr/></pic:nvPicPr>\
                <pic:blipFill><a:blip r:link="rIdImage"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>\
                <pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm>\
                <a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>\
                </w:r></w:p>
                """
        }
        let document = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" \
            xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" \
            xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" \
            xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" \
            xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"><w:body>\(body)</w:body></w:document>
            """
        return try Self.zip([
            (
                "[Content_Types].xml",
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">\
                <Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>\
                <Default Extension="xml" ContentType="application/xml"/>\
                <Override PartName="/word/document.xml" \
                ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>
                """
            ),
            (
                "_rels/.rels",
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">\
                <Relationship Id="rId1" \
                Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" \
                Target="word/document.xml"/></Relationships>
                """
            ),
            ("word/document.xml", document),
            (
                "word/_rels/document.xml.rels",
                """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">\
                \(relationships)</Relationships>
                """
            ),
        ])
    }

    /// An ODT with `paragraphs`: the `mimetype` member first and stored, as OpenDocument requires.
    static func odt(paragraphs: [String]) throws -> Data {
        let body = paragraphs.map { "<text:p>\($0)</text:p>" }.joined()
        return try Self.zip([
            ("mimetype", "application/vnd.oasis.opendocument.text"),
            (
                "content.xml",
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
                xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">\
                <office:body><office:text>\(body)</office:text></office:body></office:document-content>
                """
            ),
            (
                "META-INF/manifest.xml",
                """
                <?xml version="1.0" encoding="UTF-8"?>
                <manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" \
                manifest:version="1.2"><manifest:file-entry manifest:full-path="/" \
                manifest:media-type="application/vnd.oasis.opendocument.text"/>\
                <manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>\
                </manifest:manifest>
                """
            ),
        ])
    }

    /// A ZIP of `members` in order, the first one stored and the others deflated, made by Python's zipfile.
    private static func zip(_ members: [(name: String, text: String)]) throws -> Data {
        let directory = try TemporaryDirectory(prefix: "zip")
        defer { directory.remove() }
        var arguments = [
            "python3", "-c",
            """
            import sys, zipfile
            with zipfile.ZipFile(sys.argv[1], 'w') as z:
                for i, (name, path) in enumerate(zip(sys.argv[2::2], sys.argv[3::2])):
                    z.write(path, name, zipfile.ZIP_STORED if i == 0 else zipfile.ZIP_DEFLATED)
            """,
            directory.appending("out.zip").string,
        ]
        for (index, member) in members.enumerated() {
            let path = directory.appending("member-\(index)")
            try Data(member.text.utf8).write(to: URL(fileURLWithPath: path.string))
            arguments += [member.name, path.string]
        }
        try CommandLineTool.run(arguments)
        return try Data(contentsOf: URL(fileURLWithPath: directory.appending("out.zip").string))
    }
}
