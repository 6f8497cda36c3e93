import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

@testable import ChuteCatalog
@testable import ChutePDF

/// qpdf through ``PDFDocument``: appending the pages of several PDFs (what a merge is), choosing and turning pages,
/// removing metadata, and the errors of encrypted and damaged files.
@Suite struct PDFDocumentTests {
    /// The text of each page of `bytes`, as `pdftotext` extracts it, pages split on form feeds.
    private static func pageTexts(_ bytes: [UInt8]) throws -> [String] {
        let directory = try TemporaryDirectory(prefix: "pdf")
        defer { directory.remove() }
        let path = directory.appending("file.pdf")
        try Data(bytes).write(to: URL(fileURLWithPath: path.string))
        let text = try CommandLineTool.run(["pdftotext", "-layout", path.string, "-"]).standardOutput
        return text.split(separator: "\u{0C}", omittingEmptySubsequences: false).dropLast()
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func appendingThePagesOfThreePDFsKeepsTheirOrder() throws {
        let sources = try [["A1", "A2"], ["B1"], ["C1", "C2", "C3"]].map { pages in
            try PDFDocument(reading: PDFFixtures.make(pages: pages), password: nil)
        }
        let merged = try PDFDocument()
        try merged.appendAllPages(of: sources)
        #expect(try merged.pageCount() == 6)
        let bytes = try merged.write(PDFDocument.WriteSettings())
        #expect(try Self.pageTexts(bytes) == ["A1", "A2", "B1", "C1", "C2", "C3"])
        #expect(try PDFDocument(reading: bytes, password: nil).pageCount() == 6)
    }

    @Test func keepingPagesReordersAndRepeatsThem() throws {
        let document = try PDFDocument(reading: PDFFixtures.make(pages: ["one", "two", "three"]), password: nil)
        try document.keepPages([2, 0, 0])
        let bytes = try document.write(PDFDocument.WriteSettings())
        #expect(try Self.pageTexts(bytes) == ["three", "one", "one"])
    }

    @Test func rotatingAddsToEachPagesTurn() throws {
        let document = try PDFDocument(reading: PDFFixtures.make(pages: ["one", "two"]), password: nil)
        try document.rotatePages(by: 90)
        try document.rotatePages(by: 180)
        let bytes = try document.write(PDFDocument.WriteSettings())
        let info = try Self.pdfinfo(bytes)
        #expect(Self.field("rot", in: info) == "270", "\(info)")
    }

    @Test func removingMetadataLeavesNoInfoOrXMP() throws {
        let source = PDFFixtures.make(
            pages: ["text"],
            metadata: PDFFixtures.Metadata(title: "SecretTitle", author: "SecretAuthor")
        )
        let document = try PDFDocument(reading: source, password: nil)
        #expect(try document.metadataKinds() == ["Info", "XMP"])
        try document.removeMetadata()
        let bytes = try document.write(PDFDocument.WriteSettings())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains("SecretTitle") && !text.contains("SecretAuthor"))
        #expect(try PDFDocument(reading: bytes, password: nil).metadataKinds() == [])
    }

    @Test func aPDFMadeOfAnothersPagesCanTakeItsMetadata() throws {
        let source = try PDFDocument(
            reading: PDFFixtures.make(pages: ["a", "b"], metadata: PDFFixtures.Metadata(title: "Kept", author: "Me")),
            password: nil
        )
        let part = try PDFDocument()
        try part.appendPages([1], of: source)
        try part.copyMetadata(from: source)
        let bytes = try part.write(PDFDocument.WriteSettings())
        #expect(Self.field("Title", in: try Self.pdfinfo(bytes)) == "Kept")
    }

    @Test func compressingShrinksUncompressedStreams() throws {
        let source = PDFFixtures.make(pages: ["a", "b"], filler: 400)
        let document = try PDFDocument(reading: source, password: nil)
        let bytes = try document.write(PDFDocument.WriteSettings(compress: true))
        #expect(bytes.count * 4 < source.count, "\(source.count) → \(bytes.count) bytes")
        #expect(try Self.pageTexts(bytes).map { $0.prefix(1) } == ["a", "b"])
    }

    @Test func anEncryptedPDFNeedsItsPassword() throws {
        let directory = try TemporaryDirectory(prefix: "pdf")
        defer { directory.remove() }
        let plain = directory.appending("plain.pdf")
        let locked = directory.appending("locked.pdf")
        try PDFFixtures.write(at: plain, pages: ["secret page"])
        try CommandLineTool.run(["qpdf", "--encrypt", "user-pw", "owner-pw", "256", "--", plain.string, locked.string])
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: locked.string)))
        #expect {
            _ = try PDFDocument(reading: bytes, password: nil)
        } throws: { error in
            (error as? PDFError)?.kind == .password && (error as? PDFError)?.conversionFailure.code == .encrypted
        }
        let opened = try PDFDocument(reading: bytes, password: "user-pw")
        #expect(opened.isEncrypted)
        let written = try opened.write(PDFDocument.WriteSettings())
        #expect(try PDFDocument(reading: written, password: nil).isEncrypted == false)
        #expect(try Self.pageTexts(written) == ["secret page"])
    }

    @Test func garbageAfterAPDFHeaderIsDamage() throws {
        let bytes = Array("%PDF-1.7\n".utf8) + (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }
        #expect {
            _ = try PDFDocument(reading: bytes, password: nil).pageCount()
        } throws: { error in
            (error as? PDFError)?.conversionFailure.code == .corruptInput
        }
    }

    /// The value of the first `pdfinfo` line whose label ends with `name`: `Title:  Kept`, `Page    1 rot:   90`.
    private static func field(_ name: String, in info: String) -> String? {
        info.split(separator: "\n").compactMap { line -> String? in
            guard let colon = line.firstIndex(of: ":"), line[..<colon].hasSuffix(name) else { return nil }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }.first
    }

    /// What `pdfinfo` prints about `bytes`, page by page.
    private static func pdfinfo(_ bytes: [UInt8]) throws -> String {
        let directory = try TemporaryDirectory(prefix: "pdf")
        defer { directory.remove() }
        let path = directory.appending("file.pdf")
        try Data(bytes).write(to: URL(fileURLWithPath: path.string))
        return try CommandLineTool.run(["pdfinfo", "-f", "1", "-l", "1", path.string]).standardOutput
    }
}

/// The page ranges of `pages` and `split`.
@Suite struct PageRangesTests {
    @Test(arguments: [
        ("1-3,5", 6, [1, 2, 3, 5]),
        ("z-1", 3, [3, 2, 1]),
        ("x2", 4, [1, 3, 4]),
        ("1-z,x3-4", 5, [1, 2, 5]),
        ("2, 2 ,z", 3, [2, 2, 3]),
    ])
    func selections(text: String, count: Int, pages: [Int]) throws {
        #expect(try PageRanges(parsing: text).selection(in: count) == pages)
    }

    @Test(arguments: ["", "0", "1-", "a", "1--3", "01", "1,,2", "-2"])
    func malformedTextIsRefused(text: String) {
        #expect(throws: PageRanges.Problem.self) { try PageRanges(parsing: text) }
    }

    @Test func aPagePastTheEndOrNothingLeftIsAProblem() throws {
        #expect(throws: PageRanges.Problem.self) { try PageRanges(parsing: "1-5").selection(in: 4) }
        #expect(throws: PageRanges.Problem.self) { try PageRanges(parsing: "x1-z").selection(in: 4) }
    }
}
