import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@testable import ChutePDF

/// Every PDF of the shared corpus through qpdf: the whole ones and the damaged ones that qpdf repairs (saying so)
/// are rewritten with their pages, compressed and stripped, the one that lost its page tree too; the encrypted
/// ones need their passwords (from the manifest's notes), which open them.
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
            #expect(pages > 0, "\(row.path) has no pages after \(repairs.count) repairs")
            // Its page tree (object 172) is lost: a new one is made of the 3 page objects the file holds (poppler
            // shows 4 blank pages, the count of the linearization dictionary's /N).
            if row.path == "broken/pdf_damaged_trailer.pdf" {
                #expect(pages == 3)
                #expect(document.restoredPages == 3)
            } else {
                #expect(document.restoredPages == nil, "\(row.path)")
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
