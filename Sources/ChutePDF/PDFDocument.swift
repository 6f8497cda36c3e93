import CQPDF

/// Owns one qpdf document (`qpdf_data`), and the bytes it was read from, which qpdf reads in place.
///
/// A class rather than a `~Copyable` struct because it must be shared: qpdf copies another document's pages
/// (``appendPages(_:of:)``) without their stream data, which it reads from that document only when this one is
/// written, so a document keeps the documents it took pages from alive until it is released.
///
/// Every method reads qpdf's error right after the call that failed (`qpdf_get_error`); qpdf's object functions,
/// which return no status, leave it for `qpdf_has_error`. Not `Sendable`: create, use and release a document on one
/// thread, in one blocking call.
package final class PDFDocument {
    /// How ``write(_:)`` writes a document.
    package struct WriteSettings: Sendable {
        /// Pack objects into object streams, and decode and compress again every stream whose filters are
        /// general-purpose (Flate, LZW, ASCII85, ASCIIHex, RunLength), at zlib's default level. Images compressed
        /// with a lossy or image-specific filter (JPEG, JBIG2, CCITT, JPEG 2000) are kept as they are.
        package var compress = false

        package init(compress: Bool = false) {
            self.compress = compress
        }
    }

    let handle: qpdf_data
    /// The bytes ``init(reading:password:)`` read, or `nil` for an empty document.
    private let source: UnsafeMutableRawBufferPointer?
    /// The documents whose pages this one holds.
    private var donors: [PDFDocument] = []
    /// The number of pages that ``init(reading:password:)`` found by themselves when the page tree was lost, and
    /// made a new page tree of; `nil` when the page tree was whole.
    package private(set) var restoredPages: Int?

    /// Opens a PDF from its bytes. The corresponding C function is `qpdf_read_memory`.
    ///
    /// Damage that qpdf can repair (a broken cross-reference table, a missing trailer) is repaired, and the
    /// repairs are listed in ``warnings()``. A lost page tree, which qpdf's reconstruction does not rebuild, is made
    /// anew of the page dictionaries the file holds (``restoredPages``). Pages inherit nothing from the page tree
    /// afterwards (`qpdf_push_inherited_attributes_to_page`), so that they can move to another document whole.
    ///
    /// - Parameters:
    ///   - bytes: the file.
    ///   - password: the user or owner password; `nil` opens only files that need none.
    /// - Throws: ``PDFError`` with code `read`, of kind `password` when the file needs a password it was not given.
    package init(reading bytes: [UInt8], password: String?) throws(PDFError) {
        let handle = Self.makeHandle()
        let source = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { source.copyMemory(from: $0) }
        let status = qpdf_read_memory(
            handle,
            "input",
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            UInt64(bytes.count),
            password
        )
        var error: PDFError?
        var restoredPages: Int?
        if status & QPDF_ERRORS != 0 {
            error = Self.error(of: handle, .read, "qpdf_read_memory")
        } else {
            restoredPages = Self.restorePageTree(of: handle)
            if qpdf_push_inherited_attributes_to_page(handle) & QPDF_ERRORS != 0 {
                error = Self.error(of: handle, .read, "qpdf_push_inherited_attributes_to_page")
            }
        }
        if let error {
            var releasing: qpdf_data? = handle
            qpdf_cleanup(&releasing)
            source.deallocate()
            throw error
        }
        self.handle = handle
        self.source = source
        self.restoredPages = restoredPages
    }

    /// Gives a document whose page tree is lost (the catalog's `/Pages` names an object the file does not hold)
    /// a new one, of every page dictionary the file still holds, in the order of their object numbers: qpdf
    /// reconstructs a damaged file's cross-reference table, but not its page tree, and then finds no pages. The
    /// corresponding C functions are `qpdf_get_root`, `qpdf_get_object_by_id`, `qpdf_oh_new_dictionary`,
    /// `qpdf_make_indirect_object` and `qpdf_oh_replace_key`.
    ///
    /// - Returns: the number of pages found, or `nil` when the page tree was whole (or there is no catalog).
    private static func restorePageTree(of handle: qpdf_data) -> Int? {
        let trailer = qpdf_get_trailer(handle)
        defer { qpdf_oh_release(handle, trailer) }
        guard qpdf_oh_has_key(handle, trailer, "/Root") != QPDF_FALSE else { return nil }
        let root = qpdf_get_root(handle)
        defer { qpdf_oh_release(handle, root) }
        guard qpdf_oh_is_dictionary(handle, root) != QPDF_FALSE else { return nil }
        let tree = qpdf_oh_get_key(handle, root, "/Pages")
        defer { qpdf_oh_release(handle, tree) }
        guard qpdf_oh_is_dictionary(handle, tree) == QPDF_FALSE else { return nil }
        let sizeKey = qpdf_oh_get_key(handle, trailer, "/Size")
        defer { qpdf_oh_release(handle, sizeKey) }
        guard qpdf_oh_is_integer(handle, sizeKey) != QPDF_FALSE else { return nil }
        var pages: [qpdf_oh] = []
        for number in 1..<max(qpdf_oh_get_int_value_as_int(handle, sizeKey), 1) {
            let object = qpdf_get_object_by_id(handle, number, 0)
            // Only a dictionary's keys are read: qpdf warns about a key asked of anything else.
            var isPage = false
            if qpdf_oh_is_dictionary(handle, object) != QPDF_FALSE {
                let type = qpdf_oh_get_key(handle, object, "/Type")
                isPage = qpdf_oh_is_name_and_equals(handle, type, "/Page") != QPDF_FALSE
                qpdf_oh_release(handle, type)
            }
            if isPage { pages.append(object) } else { qpdf_oh_release(handle, object) }
        }
        guard !pages.isEmpty else { return nil }
        let kids = qpdf_oh_new_array(handle)
        let dictionary = qpdf_oh_new_dictionary(handle)
        let type = qpdf_oh_new_name(handle, "/Pages")
        let count = qpdf_oh_new_integer(handle, Int64(pages.count))
        qpdf_oh_replace_key(handle, dictionary, "/Type", type)
        qpdf_oh_replace_key(handle, dictionary, "/Count", count)
        qpdf_oh_replace_key(handle, dictionary, "/Kids", kids)
        let indirect = qpdf_make_indirect_object(handle, dictionary)
        // The dictionary's /Kids is the same array: filling it fills the page tree's.
        for page in pages {
            qpdf_oh_append_item(handle, kids, page)
            qpdf_oh_replace_key(handle, page, "/Parent", indirect)
            qpdf_oh_release(handle, page)
        }
        qpdf_oh_replace_key(handle, root, "/Pages", indirect)
        for object in [kids, dictionary, type, count, indirect] { qpdf_oh_release(handle, object) }
        return pages.count
    }

    /// Makes a document with no pages, to take pages from others. The corresponding C function is `qpdf_empty_pdf`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    package init() throws(PDFError) {
        let handle = Self.makeHandle()
        guard qpdf_empty_pdf(handle) & QPDF_ERRORS == 0 else {
            let error = Self.error(of: handle, .pages, "qpdf_empty_pdf")
            var releasing: qpdf_data? = handle
            qpdf_cleanup(&releasing)
            throw error
        }
        self.handle = handle
        self.source = nil
    }

    deinit {
        var releasing: qpdf_data? = self.handle
        qpdf_cleanup(&releasing)
        self.source?.deallocate()
    }

    /// A new qpdf handle that neither prints errors nor warnings: Chute reads both from it.
    private static func makeHandle() -> qpdf_data {
        let handle = qpdf_init()!
        qpdf_silence_errors(handle)
        qpdf_set_suppress_warnings(handle, QPDF_TRUE)
        return handle
    }

    /// The error qpdf holds for `handle`, which reading clears. The corresponding C functions are `qpdf_get_error`
    /// and `qpdf_get_error_full_text`.
    static func error(of handle: qpdf_data, _ code: PDFError.Code, _ function: String) -> PDFError {
        guard let error = qpdf_get_error(handle) else {
            return PDFError(code: code, kind: .other, function: function, message: "")
        }
        let message = qpdf_get_error_full_text(handle, error).map { String(cString: $0) } ?? ""
        return PDFError(
            code: code,
            kind: PDFError.Kind(qpdf_get_error_code(handle, error)),
            function: function,
            message: message
        )
    }

    /// Throws the error that a call of an object function left behind, if any. The corresponding C function is
    /// `qpdf_has_error`.
    func check(_ code: PDFError.Code, _ function: String) throws(PDFError) {
        guard qpdf_has_error(self.handle) == QPDF_FALSE else {
            throw Self.error(of: self.handle, code, function)
        }
    }

    /// What qpdf warned about since the last call, such as the repairs of a damaged file, and forgets them.
    /// The corresponding C functions are `qpdf_more_warnings` and `qpdf_next_warning`.
    func warnings() -> [String] {
        var warnings: [String] = []
        while qpdf_more_warnings(self.handle) != QPDF_FALSE, let warning = qpdf_next_warning(self.handle) {
            warnings.append(qpdf_get_error_full_text(self.handle, warning).map { String(cString: $0) } ?? "")
        }
        return warnings
    }

    /// Whether the file is encrypted, even when it opened without a password. The corresponding C function is
    /// `qpdf_is_encrypted`.
    var isEncrypted: Bool { qpdf_is_encrypted(self.handle) != QPDF_FALSE }

    /// The PDF version its header declares, such as `1.7`. The corresponding C function is `qpdf_get_pdf_version`.
    var version: String { qpdf_get_pdf_version(self.handle).map { String(cString: $0) } ?? "" }

    /// The number of pages. The corresponding C function is `qpdf_get_num_pages`.
    ///
    /// - Throws: ``PDFError`` with code `pages` when the page tree cannot be read.
    package func pageCount() throws(PDFError) -> Int {
        let count = qpdf_get_num_pages(self.handle)
        try self.check(.pages, "qpdf_get_num_pages")
        guard count >= 0 else {
            throw PDFError(code: .pages, kind: .damaged, function: "qpdf_get_num_pages", message: "")
        }
        return Int(count)
    }

    /// The page objects, in order. The corresponding C function is `qpdf_get_page_n`.
    func pages() throws(PDFError) -> [qpdf_oh] {
        var pages: [qpdf_oh] = []
        for index in 0..<(try self.pageCount()) {
            pages.append(qpdf_get_page_n(self.handle, index))
            try self.check(.pages, "qpdf_get_page_n")
        }
        return pages
    }

    /// Appends pages of `other` (which may be this document) at the end, in the order given; a page named twice is
    /// copied twice. The corresponding C function is `qpdf_add_page`.
    ///
    /// - Parameters:
    ///   - indices: zero-based page indices of `other`, each within its page count.
    ///   - other: the document to take them from; kept alive until this one is released.
    /// - Throws: ``PDFError`` with code `pages`.
    func appendPages(_ indices: [Int], of other: PDFDocument) throws(PDFError) {
        let pages = try other.pages()
        for index in indices {
            guard qpdf_add_page(self.handle, other.handle, pages[index], QPDF_FALSE) & QPDF_ERRORS == 0 else {
                throw Self.error(of: self.handle, .pages, "qpdf_add_page")
            }
        }
        if other !== self, !self.donors.contains(where: { $0 === other }) {
            self.donors.append(other)
        }
    }

    /// Appends every page of each document, in order: the pages of several PDFs become one.
    ///
    /// - Parameter documents: the documents, kept alive until this one is released.
    /// - Throws: ``PDFError`` with code `pages`.
    package func appendAllPages(of documents: [PDFDocument]) throws(PDFError) {
        for document in documents {
            try self.appendPages(Array(0..<(try document.pageCount())), of: document)
        }
    }

    /// Keeps only the pages at `indices`, in that order (a page named twice appears twice); the document's outline,
    /// forms and other document-level objects stay. The corresponding C functions are `qpdf_remove_page` and
    /// `qpdf_add_page`.
    ///
    /// - Parameter indices: zero-based page indices, each within the page count.
    /// - Throws: ``PDFError`` with code `pages`.
    func keepPages(_ indices: [Int]) throws(PDFError) {
        let pages = try self.pages()
        for page in pages {
            guard qpdf_remove_page(self.handle, page) & QPDF_ERRORS == 0 else {
                throw Self.error(of: self.handle, .pages, "qpdf_remove_page")
            }
        }
        for index in indices {
            // A page already back in the tree is added as a copy of itself (qpdf's `addPage` makes a shallow copy).
            guard qpdf_add_page(self.handle, self.handle, pages[index], QPDF_FALSE) & QPDF_ERRORS == 0 else {
                throw Self.error(of: self.handle, .pages, "qpdf_add_page")
            }
        }
    }

    /// Turns every page clockwise by `degrees` (a multiple of 90) more than it is turned already: the page's
    /// `/Rotate`, which viewers apply; its content is left alone. The corresponding C function is
    /// `qpdf_oh_replace_key`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func rotatePages(by degrees: Int) throws(PDFError) {
        for page in try self.pages() {
            var current = 0
            if qpdf_oh_has_key(self.handle, page, "/Rotate") != QPDF_FALSE {
                let rotation = qpdf_oh_get_key(self.handle, page, "/Rotate")
                if qpdf_oh_is_integer(self.handle, rotation) != QPDF_FALSE {
                    current = Int(qpdf_oh_get_int_value_as_int(self.handle, rotation))
                }
            }
            let turned = ((current + degrees) % 360 + 360) % 360
            qpdf_oh_replace_key(self.handle, page, "/Rotate", qpdf_oh_new_integer(self.handle, Int64(turned)))
            try self.check(.pages, "qpdf_oh_replace_key")
        }
    }

    /// The kinds of metadata the document holds: `Info` (the trailer's document information dictionary) and
    /// `XMP` (a `/Metadata` stream of the catalog or of a page).
    func metadataKinds() throws(PDFError) -> [String] {
        var kinds: [String] = []
        if qpdf_oh_has_key(self.handle, qpdf_get_trailer(self.handle), "/Info") != QPDF_FALSE {
            kinds.append("Info")
        }
        var holders = [qpdf_get_root(self.handle)]
        holders += try self.pages()
        if holders.contains(where: { qpdf_oh_has_key(self.handle, $0, "/Metadata") != QPDF_FALSE }) {
            kinds.append("XMP")
        }
        try self.check(.pages, "qpdf_oh_has_key")
        return kinds
    }

    /// Removes the document information dictionary (title, author, creator, producer, dates), the XMP of the
    /// document and of its pages, and the private data of the applications that edited it (`/PieceInfo`). Written
    /// in full afterwards, the file holds none of their objects: qpdf writes only the objects still referenced.
    /// The corresponding C function is `qpdf_oh_remove_key`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func removeMetadata() throws(PDFError) {
        qpdf_oh_remove_key(self.handle, qpdf_get_trailer(self.handle), "/Info")
        for holder in [qpdf_get_root(self.handle)] + (try self.pages()) {
            qpdf_oh_remove_key(self.handle, holder, "/Metadata")
            qpdf_oh_remove_key(self.handle, holder, "/PieceInfo")
        }
        try self.check(.pages, "qpdf_oh_remove_key")
    }

    /// Gives this document the information dictionary and document XMP of `other`, for a document made of its
    /// pages. The corresponding C function is `qpdf_oh_copy_foreign_object`.
    ///
    /// - Throws: ``PDFError`` with code `pages`.
    func copyMetadata(from other: PDFDocument) throws(PDFError) {
        let places = [
            (qpdf_get_trailer(other.handle), qpdf_get_trailer(self.handle), "/Info"),
            (qpdf_get_root(other.handle), qpdf_get_root(self.handle), "/Metadata"),
        ]
        for (from, to, key) in places where qpdf_oh_has_key(other.handle, from, key) != QPDF_FALSE {
            let object = qpdf_oh_get_key(other.handle, from, key)
            // Only indirect objects can be copied from another document; both are indirect in practice.
            guard qpdf_oh_is_indirect(other.handle, object) != QPDF_FALSE else { continue }
            let copy = qpdf_oh_copy_foreign_object(self.handle, other.handle, object)
            try self.check(.pages, "qpdf_oh_copy_foreign_object")
            qpdf_oh_replace_key(self.handle, to, key, copy)
            try self.check(.pages, "qpdf_oh_replace_key")
        }
        if !self.donors.contains(where: { $0 === other }) {
            self.donors.append(other)
        }
    }

    /// The highest PDF version of the documents whose pages this one holds, such as `1.7`; `nil` when it holds
    /// none of another's. A new document is of version 1.3 (qpdf's `qpdf_empty_pdf`) whatever is put in it.
    private var donorVersion: String? {
        func order(_ version: String) -> [Int] { version.split(separator: ".").map { Int($0) ?? 0 } }
        return self.donors.map(\.version).filter { !$0.isEmpty }.max { order($0).lexicographicallyPrecedes(order($1)) }
    }

    /// Writes the whole document (never an incremental update: nothing that is no longer referenced is kept),
    /// unencrypted, into memory, at least at the highest version of the documents it took pages from (a merge of a
    /// PDF 1.7 and a PDF 1.4 is a PDF 1.7). The corresponding C functions are `qpdf_init_write_memory`, `qpdf_write` and
    /// `qpdf_get_buffer`.
    ///
    /// - Returns: the file's bytes.
    /// - Throws: ``PDFError`` with code `write`.
    package func write(_ settings: WriteSettings) throws(PDFError) -> [UInt8] {
        guard qpdf_init_write_memory(self.handle) & QPDF_ERRORS == 0 else {
            throw Self.error(of: self.handle, .write, "qpdf_init_write_memory")
        }
        qpdf_set_preserve_encryption(self.handle, QPDF_FALSE)
        if let version = self.donorVersion {
            qpdf_set_minimum_pdf_version(self.handle, version)
        }
        if settings.compress {
            qpdf_set_object_stream_mode(self.handle, qpdf_o_generate)
            qpdf_set_compress_streams(self.handle, QPDF_TRUE)
            qpdf_set_decode_level(self.handle, qpdf_dl_generalized)
        }
        guard qpdf_write(self.handle) & QPDF_ERRORS == 0 else {
            throw Self.error(of: self.handle, .write, "qpdf_write")
        }
        let count = qpdf_get_buffer_length(self.handle)
        guard let buffer = qpdf_get_buffer(self.handle), count > 0 else {
            throw PDFError(code: .write, kind: .other, function: "qpdf_get_buffer", message: "qpdf wrote nothing")
        }
        return Array(UnsafeBufferPointer(start: buffer, count: count))
    }
}
