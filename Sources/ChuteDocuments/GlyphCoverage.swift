import CFontconfig
import CPoppler

/// The characters that LibreOffice drew without a font: those of a PDF's text that no installed font has.
///
/// LibreOfficeKit does not report a character it had no glyph for: it draws the fallback font's empty box (`.notdef`)
/// and still maps it to the character in the PDF's text, so that the text extracts as if it were drawn. Whether it
/// could have been drawn is what fontconfig, which LibreOffice takes its fonts from, says: a character no installed
/// font covers was a box. (A font embedded in the document itself is not counted: its characters may be reported
/// although they were drawn.)
///
/// - Important: the set of installed fonts is read once per worker, by ``init()``; fonts installed later count from
///   the next worker on. `@unchecked Sendable`: the character set is written only by ``init()`` and then only read
///   (`FcCharSetHasChar`), and poppler documents are made and released within one call.
final class GlyphCoverage: @unchecked Sendable {
    /// The union of the character sets of every installed font (`FcCharSet`), owned; only read after ``init()``.
    private let covered: OpaquePointer

    /// Reads the character sets of the installed fonts. The corresponding C functions are
    /// `FcInitLoadConfigAndFonts`, `FcFontList` and `FcCharSetMerge`.
    ///
    /// - Returns: `nil` when fontconfig cannot be loaded.
    init?() {
        guard let config = FcInitLoadConfigAndFonts() else { return nil }
        defer { FcConfigDestroy(config) }
        guard let pattern = FcPatternCreate(), let objects = FcObjectSetCreate() else { return nil }
        defer {
            FcPatternDestroy(pattern)
            FcObjectSetDestroy(objects)
        }
        _ = FcObjectSetAdd(objects, FC_CHARSET)
        guard let fonts = FcFontList(config, pattern, objects), let covered = FcCharSetCreate() else { return nil }
        defer { FcFontSetDestroy(fonts) }
        for index in 0..<Int(fonts.pointee.nfont) {
            var charset: OpaquePointer?
            if let font = fonts.pointee.fonts[index],
                FcPatternGetCharSet(font, FC_CHARSET, 0, &charset) == FcResultMatch,
                let charset
            {
                _ = FcCharSetMerge(covered, charset, nil)
            }
        }
        self.covered = covered
    }

    deinit {
        FcCharSetDestroy(self.covered)
    }

    /// The distinct characters of `pdf`'s text, in order of appearance, that no installed font has (white space,
    /// control characters and private-use ones aside: a symbol font's characters, such as Wingdings' at U+F0xx, which
    /// LibreOffice draws from OpenSymbol at other code points). The corresponding C functions are `poppler_page_get_text` and `FcCharSetHasChar`.
    ///
    /// - Returns: the characters, or an empty list when the PDF cannot be read (its check fails elsewhere).
    func missingCharacters(in pdf: [UInt8]) -> [Unicode.Scalar] {
        let data = pdf.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        guard let document = poppler_document_new_from_bytes(data, nil, nil) else { return [] }
        defer { g_object_unref(UnsafeMutableRawPointer(document)) }
        var missing: [Unicode.Scalar] = []
        var seen: Set<Unicode.Scalar> = []
        for index in 0..<poppler_document_get_n_pages(document) {
            guard let page = poppler_document_get_page(document, index) else { continue }
            defer { g_object_unref(UnsafeMutableRawPointer(page)) }
            guard let text = poppler_page_get_text(page) else { continue }
            defer { g_free(text) }
            for scalar in String(cString: text).unicodeScalars where seen.insert(scalar).inserted {
                let category = scalar.properties.generalCategory
                guard !scalar.properties.isWhitespace, category != .control, category != .privateUse,
                    FcCharSetHasChar(self.covered, scalar.value) == FcFalse
                else { continue }
                missing.append(scalar)
            }
        }
        return missing
    }
}
