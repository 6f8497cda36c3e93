import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// Every document and PDF of the shared corpus through one real daemon (issue 27's acceptance): each `ok` and `warn`
/// row becomes a PDF with its pages, each `fail` row of them fails with a message that says what the file is; with it
/// the corpus files of issue 27's items 9 (a DOCX with comments, a web page with remote resources), 10 (Latin-1 text,
/// an empty XLSX), 11 (Japanese RTF, and Ethiopic that no font covers), 17 (a PDF that lost its page tree) and 18 (DOCX → TXT without a BOM).
@Suite(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"), .timeLimit(.minutes(15)))
struct CorpusDocumentsEndToEndTests {
    /// The user passwords the manifest gives for its encrypted PDFs, each given by a rule of its own.
    private static let passwords = [
        "pdf_encrypted_user.pdf": "openpassword", "pdf_encrypted_user_aes_scan.pdf": "ELXRTQWS",
    ]

    /// The rows that may fail, and the code they fail with: a password-protected DOCX, which LibreOffice opens in
    /// batch mode without asking for its password (Chute has no key to give one).
    private static let allowedFailures = ["document/docx_encrypted_password.docx": "encrypted"]

    /// The corpus's document and PDF rows: its `document/` and `pdf/` folders and the damaged office files and PDFs
    /// of `broken/`.
    private static func rows() throws -> [Corpus.Row] {
        let documentExtensions = ["doc", "docx", "odt", "rtf", "html", "txt", "xlsx", "ods", "pptx", "odp", "pdf"]
        return try Corpus.rows().filter { row in
            row.path.hasPrefix("document/") || row.path.hasPrefix("pdf/")
                || (row.path.hasPrefix("broken/")
                    && documentExtensions.contains(FilePath(row.path).extension ?? ""))
        }
    }

    @Test func everyOkAndWarnDocumentAndPDFConvertsAndTheBrokenOnesSayWhatTheyAre() async throws {
        let rows = try Self.rows()
        #expect(rows.count >= 42, "\(rows.count) rows")
        let lockedRules = Self.passwords.sorted { $0.key < $1.key }.enumerated().map { index, entry in
            """
              - name: locked-\(index)
                match: "\(entry.key)"
                to: pdf
                password: \(entry.value)
                output: ./outbox
            """
        }.joined(separator: "\n")
        let harness = try DaemonHarness(
            afterSentinels: """
                  - name: to-txt
                    match: "*-to-txt.*"
                    to: txt
                    output: ./outbox
                \(lockedRules)
                  - name: to-pdf
                    match: "*"
                    to: pdf
                    output: ./outbox
                """,
            settings: "  concurrency: {document: 1, pdf: 1}"
        )
        defer { harness.stop() }
        try await harness.start()
        let staging = try harness.directory.makeDirectory("staging")
        var names: [String] = []
        for row in rows {
            let name = FilePath(row.path).lastComponent!.string
            try FileManager.default.copyItem(
                atPath: Corpus.folder.appending(row.path).string,
                toPath: staging.appending(name).string
            )
            names.append(name)
        }
        // Item 18: a DOCX to plain text.
        try FileManager.default.copyItem(
            atPath: Corpus.folder.appending("document/docx_tables.docx").string,
            toPath: staging.appending("tables-to-txt.docx").string
        )
        names.append("tables-to-txt.docx")
        // Item 11: Ethiopic, which no installed font covers.
        try Data("Greeting in Amharic: ሰላም ለዓለም\n".utf8).write(
            to: URL(fileURLWithPath: staging.appending("amharic.txt").string)
        )
        names.append("amharic.txt")
        try harness.moveIn(names, from: staging)

        let sidecars = try await harness.waitForSidecars(names.count, timeout: 900)
        var converted = 0
        for row in rows {
            let name = FilePath(row.path).lastComponent!.string
            let output = "\(FilePath(name).stem!).pdf"
            let sidecar = try #require(sidecars["\(output).chute.json"], "no sidecar for \(row.path)")
            let summary =
                "\(row.path) [\(row.expect)]: \(sidecar.status) \(sidecar.error?.code ?? "") "
                + "\(sidecar.error?.message ?? "") warnings=\(sidecar.warnings)"
            print(summary)
            if row.expect == "fail" {
                #expect(sidecar.status == .failed, "\(summary)")
                continue
            }
            if let code = Self.allowedFailures[row.path], sidecar.status == .failed {
                #expect(sidecar.error?.code == code, "\(summary)")
                continue
            }
            #expect(sidecar.status == .completed, "\(summary)")
            guard sidecar.status == .completed else { continue }
            converted += 1
            let pages = try Self.pages(ofPDF: harness.outbox.appending(output))
            #expect((pages ?? 0) >= 1, "\(row.path): \(String(describing: pages)) pages")
        }
        print("converted \(converted) of \(rows.filter { $0.expect != "fail" }.count) ok and warn rows")

        // Item 9: the comments are in the PDF, and the web page's text without its remote resources.
        let comments = try Self.text(ofPDF: harness.outbox.appending("docx_comments.pdf"))
        #expect(comments.contains("comment in a comment"), "\(comments)")
        // Item 10: Latin-1 text is read as such, its accented letters kept.
        let latin1 = try Self.text(ofPDF: harness.outbox.appending("txt_latin1.pdf"))
        #expect(latin1.contains("ção") || latin1.contains("ñ"), "\(latin1.prefix(400))")
        let latin1Sidecar = try #require(sidecars["txt_latin1.pdf.chute.json"])
        #expect(latin1Sidecar.details["textEncoding"] == "windows-1252", "\(latin1Sidecar.details)")
        // Item 10: an empty ZIP is called that.
        let emptyZip = try #require(sidecars["xlsx_empty_zip.pdf.chute.json"])
        #expect(emptyZip.error?.message.contains("empty ZIP archive") == true, "\(String(describing: emptyZip.error))")
        // Item 11: the Japanese text is drawn with a CJK font.
        let fonts = try CommandLineTool.run(["pdffonts", harness.outbox.appending("rtf_japanese.pdf").string])
            .standardOutput
        #expect(fonts.contains("CJK"), "\(fonts)")
        let japanese = try #require(sidecars["rtf_japanese.pdf.chute.json"])
        #expect(!japanese.warnings.contains { $0.contains("no font") }, "\(japanese.warnings)")
        // Item 11: characters that no installed font has are drawn as boxes, and the sidecar says which.
        let amharic = try #require(sidecars["amharic.pdf.chute.json"])
        print("amharic.txt: \(amharic.warnings)")
        #expect(amharic.status == .completed, "\(String(describing: amharic.error))")
        #expect(
            amharic.warnings.contains { $0.contains("had no font") && $0.contains("U+1230 ሰ") },
            "\(amharic.warnings)"
        )
        // Item 17: the PDF that lost its page tree keeps the 3 pages it holds, and the sidecar says it was repaired.
        let damaged = try #require(sidecars["pdf_damaged_trailer.pdf.chute.json"])
        #expect(try Self.pages(ofPDF: harness.outbox.appending("pdf_damaged_trailer.pdf")) == 3)
        #expect(damaged.warnings.contains { $0.contains("repaired") }, "\(damaged.warnings)")
        // Item 18: plain text from a DOCX starts with its text, not a byte order mark.
        let plain = try #require(
            FileManager.default.contents(atPath: harness.outbox.appending("tables-to-txt.txt").string)
        )
        #expect(!plain.starts(with: [0xEF, 0xBB, 0xBF]), "\(Array(plain.prefix(8)))")
        #expect(String(decoding: plain, as: UTF8.self).contains("Name"))
    }

    /// The text of a PDF, as `pdftotext` extracts it.
    private static func text(ofPDF path: FilePath) throws -> String {
        try CommandLineTool.run(["pdftotext", "-enc", "UTF-8", path.string, "-"]).standardOutput
    }

    /// The page count `pdfinfo` reads.
    private static func pages(ofPDF path: FilePath) throws -> Int? {
        let info = try CommandLineTool.run(["pdfinfo", path.string], check: false).standardOutput
        let line = info.split(separator: "\n").first { $0.hasPrefix("Pages:") }
        return line.flatMap { Int($0.dropFirst("Pages:".count).trimmingCharacters(in: .whitespaces)) }
    }
}
