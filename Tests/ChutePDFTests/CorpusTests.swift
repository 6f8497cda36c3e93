import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@testable import ChutePDF

/// Every PDF of the shared corpus through qpdf: the whole ones and the damaged ones that qpdf repairs (saying so)
/// are rewritten with their pages, compressed and stripped, and one that keeps no page tree is told apart; the encrypted ones need their passwords (from the
/// manifest's notes), which open them.
@Suite(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
struct CorpusTests {
    /// The user passwords the manifest gives for its encrypted PDFs.
    private static let passwords = [
        "pdf/pdf_encrypted_user.pdf": "openpassword", "pdf/pdf_encrypted_user_aes_scan.pdf": "ELXRTQWS",
    ]

    @Test func everyCorpusPDFIsRewrittenWithItsPages() throws {
        let rows = try Corpus.rows().filter { $0.path.hasSuffix(".pdf") }
        #expect(rows.count >= 14)
        for row in rows {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(row.path).string)))
            let password = Self.passwords[row.path]
            if password != nil {
                #expect(throws: PDFError.self, "\(row.path) opened without its password") {
                    try PDFDocument(reading: bytes, password: nil)
                }
            }
            let document = try PDFDocument(reading: bytes, password: password)
            let pages = try document.pageCount()
            let repairs = document.warnings()
            // A trailer without /Root leaves qpdf's repair without a page tree: the engine fails such a file as
            // corruptInput ("the PDF has no pages"); only damaged files may come to that.
            guard pages > 0 else {
                #expect(row.path.hasPrefix("broken/"), "\(row.path) has no pages")
                print("\(row.path): no pages after \(repairs.count) repairs")
                continue
            }
            try document.removeMetadata()
            let written = try document.write(PDFDocument.WriteSettings(compress: true))
            let reread = try PDFDocument(reading: written, password: nil)
            #expect(try reread.pageCount() == pages, "\(row.path)")
            #expect(try reread.metadataKinds() == [], "\(row.path)")
            #expect(reread.warnings().isEmpty, "\(row.path): the rewrite still needs repairs")
            print("\(row.path): \(pages) pages, \(bytes.count) → \(written.count) bytes, \(repairs.count) repairs")
        }
    }
}
