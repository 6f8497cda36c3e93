import ChuteCatalog
import ChuteCore
import Foundation
import SystemPackage

/// Checks what LibreOffice wrote before it is kept: that the file is the format asked for, whole, with content.
///
/// - PDF: `%PDF-` first, `%%EOF` in its last kilobyte, and at least one page object (`/Type /Page`); the pages
///   counted are reported.
/// - DOCX: a ZIP with a `word/document.xml` member; ODT: a ZIP whose first member `mimetype` says
///   `application/vnd.oasis.opendocument.text`.
/// - RTF: `{\rtf` first; HTML: an `<html` element; TXT: valid UTF-8.
enum DocumentVerifier {
    struct Facts {
        /// The page objects of a PDF.
        var pages: Int?
    }

    /// Verifies `path` as `format`.
    ///
    /// - Throws: `outputFailed`, saying what is wrong.
    static func verify(_ path: FilePath, as format: DocumentFormat) throws(ConversionFailure) -> Facts {
        guard let bytes = FileManager.default.contents(atPath: path.string), !bytes.isEmpty else {
            throw ConversionFailure(.outputFailed, "LibreOffice wrote an empty \(format.rawValue)")
        }
        func refuse(_ what: String) -> ConversionFailure {
            ConversionFailure(.outputFailed, "LibreOffice's \(format.rawValue) output failed its check: \(what)")
        }
        switch format {
        case .pdf:
            guard bytes.starts(with: Array("%PDF-".utf8)) else { throw refuse("no %PDF- header") }
            guard bytes.suffix(1024).range(of: Data("%%EOF".utf8)) != nil else { throw refuse("no %%EOF trailer") }
            let pages = Self.pageObjects(in: bytes)
            guard pages > 0 else { throw refuse("no pages") }
            return Facts(pages: pages)
        case .docx:
            guard bytes.starts(with: [0x50, 0x4B, 0x03, 0x04]), bytes.range(of: Data("word/document.xml".utf8)) != nil
            else { throw refuse("not a ZIP with word/document.xml") }
        case .odt:
            guard MediaType.sniff(bytes.prefix(MediaType.headerLength)) == .odt else {
                throw refuse("not a ZIP whose mimetype is an OpenDocument text")
            }
        case .rtf:
            guard bytes.starts(with: Array("{\\rtf".utf8)) else { throw refuse("no {\\rtf header") }
        case .html:
            guard String(decoding: bytes.prefix(4096), as: UTF8.self).lowercased().contains("<html") else {
                throw refuse("no <html> element")
            }
        case .txt:
            guard String(validating: bytes, as: UTF8.self) != nil else { throw refuse("not UTF-8") }
        }
        return Facts()
    }

    /// The number of page objects: `/Type /Page` not followed by `s` (that is the page tree's `/Pages`).
    /// LibreOffice writes object dictionaries uncompressed, so a byte search finds them all.
    private static func pageObjects(in bytes: Data) -> Int {
        let marker = Array("/Type".utf8)
        var count = 0
        var index = bytes.startIndex
        while let found = bytes[index...].firstRange(of: marker) {
            var cursor = found.upperBound
            while cursor < bytes.endIndex, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[cursor]) { cursor += 1 }
            let word = Array("/Page".utf8)
            if bytes[cursor...].starts(with: word) {
                let after = cursor + word.count
                if after >= bytes.endIndex || !(bytes[after] == UInt8(ascii: "s")) { count += 1 }
            }
            index = found.upperBound
        }
        return count
    }
}
