import ChuteCore
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// `bytes` followed by zeros up to 64 bytes, the least a sniff needs to see everything it checks.
private func header(_ bytes: [UInt8]) -> [UInt8] {
    bytes + [UInt8](repeating: 0, count: max(0, 64 - bytes.count))
}

/// An ISO base media file (MP4, HEIF, QuickTime) starting with an `ftyp` box of the given major brand.
private func isoHeader(brand: String) -> [UInt8] {
    header([0x00, 0x00, 0x00, 0x18] + Array("ftyp".utf8) + Array(brand.utf8) + [0x00, 0x00, 0x00, 0x00])
}

/// First bytes of real file types, and what they should be recognised as.
private let signatures: [([UInt8], MediaType)] = [
    (header([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8)), .jpeg),
    (header([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D] + Array("IHDR".utf8)), .png),
    (isoHeader(brand: "heic"), .heif),
    (isoHeader(brand: "mif1"), .heif),
    (isoHeader(brand: "avif"), .avif),
    (isoHeader(brand: "isom"), .mp4),
    (isoHeader(brand: "qt  "), .quicktime),
    (header([0x1A, 0x45, 0xDF, 0xA3, 0x9F, 0x42, 0x86, 0x81, 0x01]), .matroska),
    (header(Array("RIFF".utf8) + [0x24, 0x08, 0x00, 0x00] + Array("WAVEfmt ".utf8)), .wav),
    (header(Array("RIFF".utf8) + [0x24, 0x08, 0x00, 0x00] + Array("WEBPVP8 ".utf8)), .webp),
    (header(Array("GIF89a".utf8)), .gif),
    // The raster formats of issue 11, with the first bytes ImageMagick 6.9.11 writes (97x61 pixels).
    (header([0x01, 0xDA, 0x00, 0x02, 0x00, 0x03, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x03]), .sgi),
    (header([0x01, 0xDA, 0x01, 0x01, 0x00, 0x02, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x01]), .sgi),
    (
        header([0x59, 0xA6, 0x6A, 0x95, 0x00, 0x00, 0x00, 0x61, 0x00, 0x00, 0x00, 0x3D, 0x00, 0x00, 0x00, 0x18]),
        .sunraster
    ),
    (header([0x00, 0x00, 0x00, 0x65, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18]), .xwd),
    (header([0x65, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00]), .xwd),
    (
        header([
            0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x18, 0x00,
        ]), .tga
    ),
    (
        header([
            0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x20, 0x00, 0x08, 0x00,
        ]), .tga
    ),
    (
        header([
            0x00, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x00, 0x20, 0x00, 0x10, 0x08,
        ]), .tga
    ),
    (header(Array("P7\nWIDTH 128\nHEIGHT 128\n".utf8)), .netpbm),
    (header(Array("Pf\n128 128\n-1.0\n".utf8)), .netpbm),
    (header(Array("PF\n97 61\n-1.0\n".utf8)), .netpbm),
    (header(Array("P4\n97 61\n".utf8)), .netpbm),
    (header(Array("P5 97 61 255\n".utf8)), .netpbm),
    (header(Array("P1\n# plain\n".utf8)), .netpbm),
    (header([0x76, 0x2F, 0x31, 0x01, 0x02, 0x00, 0x00, 0x00] + Array("channels".utf8)), .openexr),
    (header([0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20, 0x0D, 0x0A, 0x87, 0x0A]), .jpeg2000),
    (header([0xFF, 0x4F, 0xFF, 0x51, 0x00, 0x2F]), .jpeg2000),
    (header(Array("%PDF-1.7\n".utf8)), .pdf),
    (Array("#EXTM3U\n#EXTINF:10,clip\nhttp://example.invalid/a.ts\n".utf8), .playlist),
    (Array("<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"/>\n".utf8), .svg),
    (Array("  <svg width=\"10\" height=\"10\"></svg>".utf8), .svg),
    (header(Array("FUJIFILMCCD-RAW 0201FF383501".utf8)), .raf),
    (header(Array("IIRO".utf8) + [0x08, 0x00, 0x00, 0x00]), .orf),
    (header(Array("MMOR".utf8) + [0x00, 0x00, 0x00, 0x08]), .orf),
    (header([0x49, 0x49, 0x55, 0x00, 0x18, 0x00, 0x00, 0x00]), .rw2),
    (isoHeader(brand: "crx "), .cr3),
    (header([0x49, 0x49, 0x2A, 0x00, 0x10, 0x00, 0x00, 0x00] + Array("CR".utf8) + [0x02, 0x00]), .cr2),
]

/// A classic TIFF header whose first directory (IFD0) right after it holds `tags` (each a SHORT of value 1), and a
/// `Make` tag pointing at `make` after the directory when it is given.
private func tiff(
    tags: [Int],
    make: String? = nil,
    littleEndian: Bool = true,
    directoryAt directory: Int = 8
)
    -> [UInt8]
{
    func bytes(_ value: Int, _ width: Int) -> [UInt8] {
        let bigEndian = (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * (width - 1 - $0))) }
        return littleEndian ? bigEndian.reversed() : bigEndian
    }
    var entries = tags.map { ($0, 3, 1, 1) }
    let text: [UInt8] = make.map { Array($0.utf8) + [0] } ?? []
    let directoryLength = 2 + 12 * (entries.count + (make == nil ? 0 : 1)) + 4
    if make != nil { entries.append((0x010F, 2, text.count, directory + directoryLength)) }
    entries.sort { $0.0 < $1.0 }
    var file: [UInt8] = littleEndian ? [0x49, 0x49, 0x2A, 0x00] : [0x4D, 0x4D, 0x00, 0x2A]
    file += bytes(directory, 4)
    file += [UInt8](repeating: 0, count: directory - file.count)
    file += bytes(entries.count, 2)
    for (tag, type, count, value) in entries {
        file += bytes(tag, 2) + bytes(type, 2) + bytes(count, 4)
        file += type == 3 && count == 1 ? bytes(value, 2) + [0, 0] : bytes(value, 4)
    }
    return file + bytes(0, 4) + text
}

@Suite struct MediaTypeTests {
    @Test(arguments: signatures)
    func recognisesFileTypeFromItsFirstBytes(bytes: [UInt8], expected: MediaType) {
        #expect(MediaType.sniff(bytes) == expected)
    }

    @Test func categoriesFollowTheType() {
        #expect(MediaType.jpeg.category == .image)
        #expect(MediaType.heif.category == .image)
        #expect(MediaType.mp4.category == .video)
        #expect(MediaType.matroska.category == .video)
        #expect(MediaType.wav.category == .audio)
        #expect(MediaType.pdf.category == .pdf)
        // Text that poses as media has no category, so a `type:` filter never lets it through.
        #expect(MediaType.playlist.category == nil)
        #expect(MediaType.svg.category == nil)
        for raw in [MediaType.dng, .cr2, .cr3, .nef, .arw, .raf, .orf, .rw2] {
            #expect(raw.category == .image)
            #expect(MediaType.usual(forExtension: raw.rawValue.uppercased()) == raw)
        }
    }

    @Test func tiffBasedCameraRawIsToldFromPlainTIFFByItsFirstDirectory() {
        let plain = [0x0100, 0x0101, 0x0102, 0x0103, 0x0106, 0x0111, 0x0115, 0x0117]
        #expect(MediaType.sniff(tiff(tags: plain)) == .tiff)
        #expect(MediaType.sniff(tiff(tags: plain + [0xC612])) == .dng)
        #expect(MediaType.sniff(tiff(tags: plain + [0xC612], littleEndian: false)) == .dng)
        #expect(MediaType.sniff(tiff(tags: plain + [0x014A], make: "NIKON CORPORATION")) == .nef)
        #expect(MediaType.sniff(tiff(tags: plain + [0x014A], make: "SONY")) == .arw)
        #expect(MediaType.sniff(tiff(tags: plain + [0xC634], make: "SONY")) == .arw)
        // A TIFF that an editor saved from a Nikon or Sony photo keeps the Make but has no raw sub-image.
        #expect(MediaType.sniff(tiff(tags: plain, make: "NIKON CORPORATION")) == .tiff)
        #expect(MediaType.sniff(tiff(tags: plain, make: "SONY")) == .tiff)
        // SubIFDs alone (a TIFF with thumbnails in sub-directories) is not a camera's raw file.
        #expect(MediaType.sniff(tiff(tags: plain + [0x014A], make: "Canon")) == .tiff)
        // A DNG tag beyond the bytes looked at leaves the file a TIFF, and a directory that runs past the header
        // is read as far as it goes.
        let late = tiff(tags: plain + [0xC612], directoryAt: MediaType.headerLength)
        #expect(MediaType.sniff(late) == .tiff)
        #expect(MediaType.sniff(Array(tiff(tags: plain + [0xC612]).prefix(40))) == .tiff)
    }

    /// The camera RAW files of the shared corpus sniff as their kind, and its TIFF images (BigTIFF, OME, tiled,
    /// multi-page) still as TIFF.
    @Test(.enabled(if: Corpus.isPresent, "the shared corpus (../shared/corpus) is absent"))
    func corpusRawFilesAndTIFFsAreRecognised() throws {
        let expected: [String: MediaType] = [
            "raw/dng_lg_g4_lossy.dng": .dng, "raw/cr3_canon_r6_pruned.cr3": .cr3, "raw/cr2_canon_350d_stub.cr2": .cr2,
            "raw/raf_fujifilm_s5pro_stub.raf": .raf, "raw/rw2_panasonic_lx3_stub.rw2": .rw2,
        ]
        var tiffs = 0
        for row in try Corpus.rows() {
            let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: Corpus.folder.appending(row.path).string))
            defer { try? file.close() }
            let header = [UInt8](try file.read(upToCount: MediaType.headerLength) ?? Data())
            if let type = expected[row.path] {
                #expect(MediaType.sniff(header) == type, "\(row.path)")
            } else if row.path.hasPrefix("image/tif") {
                #expect(MediaType.sniff(header) == .tiff, "\(row.path)")
                tiffs += 1
            }
        }
        #expect(tiffs >= 8)
    }

    @Test func randomBytesAreNotRecognised() {
        // A fixed pseudo-random sequence (a linear congruential generator), so the test is the same every run.
        var state: UInt32 = 0x2545_F491
        let bytes = (0..<512).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
        #expect(MediaType.sniff(bytes) == nil)
    }

    @Test(
        arguments: [
            // A TGA-like header whose interleaving bits (6 and 7 of the descriptor) are set.
            [
                0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x18,
                0xC0,
            ],
            // A colour-mapped TGA-like header without a colour map.
            [
                0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x08,
                0x00,
            ],
            // A TGA-like header of width 0.
            [
                0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3D, 0x00, 0x18,
                0x00,
            ],
            // SGI's magic number with 5 bytes per channel.
            [0x01, 0xDA, 0x00, 0x05, 0x00, 0x03, 0x00, 0x61, 0x00, 0x3D, 0x00, 0x03],
            // XWD's version 7 after a header size too small for its fixed header.
            [0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x18],
        ] as [[UInt8]]
    )
    func headersOutsideTheirFormatsRangesAreNotRecognised(bytes: [UInt8]) {
        #expect(MediaType.sniff(header(bytes)) == nil)
    }

    @Test func tooFewBytesAreNotRecognised() {
        #expect(MediaType.sniff([UInt8]()) == nil)
        #expect(MediaType.sniff([0xFF, 0xD8]) == nil)
        #expect(MediaType.sniff([UInt8](repeating: 0x20, count: 24)) == nil)
    }
}

/// Office documents, web pages and plain text (issue 13): ZIPs by their member names, OLE2, RTF, and text only when
/// it can be nothing else.
@Suite struct DocumentSniffingTests {
    /// A ZIP local file header for `name` with `data` stored, as the start of a file.
    private static func zipMember(_ name: String, _ data: String = "", streamed: Bool = false) -> [UInt8] {
        func le(_ value: Int, _ width: Int) -> [UInt8] {
            (0..<width).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        let payload = Array(data.utf8)
        return [0x50, 0x4B, 0x03, 0x04] + le(20, 2) + le(streamed ? 0x08 : 0, 2) + le(0, 2) + le(0, 4) + le(0, 4)
            + le(payload.count, 4) + le(payload.count, 4) + le(name.utf8.count, 2) + le(0, 2) + Array(name.utf8)
            + payload
    }

    @Test(
        arguments: [
            (zipMember("mimetype", "application/vnd.oasis.opendocument.text"), MediaType.odt),
            (zipMember("mimetype", "application/vnd.oasis.opendocument.spreadsheet"), .ods),
            (zipMember("mimetype", "application/vnd.oasis.opendocument.presentation"), .odp),
            (zipMember("[Content_Types].xml", "<Types/>") + zipMember("word/document.xml", "<w/>"), .docx),
            (zipMember("_rels/.rels", "<R/>") + zipMember("docProps/app.xml") + zipMember("xl/workbook.xml"), .xlsx),
            (zipMember("[Content_Types].xml", "<Types/>") + zipMember("ppt/presentation.xml"), .pptx),
            ([0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1] + [UInt8](repeating: 0, count: 56), .doc),
            (Array(#"{\rtf1\ansi Hello}"#.utf8), .rtf),
            (Array("<!DOCTYPE html>\n<html><body>Hi</body></html>".utf8), .html),
            (Array("\u{FEFF}  <HTML><HEAD><TITLE>x</TITLE></HEAD></HTML>".utf8), .html),
            (Array("<!-- saved page -->\n<html lang=en>".utf8), .html),
            (Array("Meeting notes\r\n\tGrüße, 12 items\u{0C}\n".utf8), .text),
        ] as [([UInt8], MediaType)]
    )
    func officeDocumentsAreRecognisedByTheirContent(bytes: [UInt8], expected: MediaType) {
        #expect(MediaType.sniff(bytes) == expected)
        #expect(expected.category == .document)
    }

    @Test func aZipOfOtherFilesAndBytesThatAreNoTextAreNotDocuments() {
        // A ZIP of photos; a member written as a stream hides what follows it.
        #expect(MediaType.sniff(Self.zipMember("photos/1.jpg", "xx") + Self.zipMember("photos/2.jpg")) == nil)
        #expect(MediaType.sniff(Self.zipMember("a.bin", streamed: true) + Self.zipMember("word/document.xml")) == nil)
        // A NUL, an escape character: not plain text.
        #expect(MediaType.sniff(Array("text".utf8) + [0x00] + Array("more".utf8)) == nil)
        #expect(MediaType.sniff(Array("colour \u{1B}[31mred".utf8)) == nil)
        // Text kinds that are refused stay what they were.
        #expect(MediaType.sniff(Array("#EXTM3U\nhttp://example.com/a.ts\n".utf8)) == .playlist)
        #expect(MediaType.sniff(Array("<svg xmlns=\"http://www.w3.org/2000/svg\"/>".utf8)) == .svg)
    }

    @Test func aCharacterCutByTheEndOfTheHeaderStillLeavesText() {
        let text = String(repeating: "é", count: MediaType.headerLength)
        #expect(MediaType.sniff(Array(text.utf8)) == .text)
    }

    @Test func everyDocumentOfTheCorpusIsRecognisedAsItsExtensionSays() throws {
        try #require(Corpus.isPresent)
        let documents = try Corpus.rows().filter { $0.path.hasPrefix("document/") }
        #expect(documents.count >= 20)
        var sniffed: [String: MediaType?] = [:]
        for row in documents {
            let whole = try Data(contentsOf: URL(fileURLWithPath: Corpus.folder.appending(row.path).string))
            // What the document engine does: the header, then all the members of an Office Open XML file.
            let type =
                MediaType.sniff(whole.prefix(MediaType.headerLength)) ?? MediaType.officeDocument(inZip: Array(whole))
            sniffed[row.path] = type
        }
        // Word for Mac's thumbnail, 19 KB, comes before the first `word/` member: the header alone cannot tell.
        let tables = try Data(
            contentsOf: URL(fileURLWithPath: Corpus.folder.appending("document/docx_tables.docx").string)
        )
        #expect(MediaType.sniff(tables.prefix(MediaType.headerLength)) == nil)
        for (path, type) in sniffed {
            let expected: MediaType? =
                switch path {
                // An encrypted OOXML file is an OLE2 container.
                case "document/docx_encrypted_password.docx": .doc
                default: MediaType.usual(forExtension: String(path.split(separator: ".").last ?? ""))
                }
            #expect(type == expected, "\(path)")
        }
    }
}
