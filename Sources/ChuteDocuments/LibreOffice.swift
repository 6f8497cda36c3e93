import CLibreOfficeKit
import ChuteCatalog
import Foundation
import SystemPackage

/// LibreOffice, loaded into this process through LibreOfficeKit and kept for the life of the worker: the document
/// engine's warm instance. The corresponding C function is `lok_init_2`.
///
/// LibreOfficeKit runs LibreOffice inside the calling process, not as a child: when the supervisor kills the worker
/// (its job's timeout, shutdown), LibreOffice ends with it, and the worker's network filter holds for it too.
///
/// - Important: LibreOffice can be loaded once per process, and is not thread-safe: the one instance belongs to the
///   worker's conversion thread, which alone calls it (hence `@unchecked Sendable`: the engine that holds it is
///   only ever called on that thread). It is never destroyed; the worker process ends instead.
final class LibreOffice: @unchecked Sendable {
    private let office: UnsafeMutablePointer<LibreOfficeKit>
    /// `LibreOffice 7.4.7.2`, from `getVersionInfo`.
    let version: String

    /// Loads LibreOffice from `installation` with its user profile in `profile`.
    ///
    /// - Parameters:
    ///   - installation: LibreOffice's `program` folder, which holds `libmergedlo.so`.
    ///   - profile: a folder of this worker's own (LibreOffice locks its profile), created if needed.
    /// - Throws: ``LibreOfficeError`` (`.start`).
    init(installation: FilePath, profile: FilePath) throws(LibreOfficeError) {
        let url = Self.fileURL(profile)
        guard let office = lok_init_2(installation.string, url) else {
            throw LibreOfficeError(
                code: .start,
                function: "lok_init_2",
                message: "LibreOffice could not be loaded from \(installation) (is libreoffice-core-nogui installed?)"
            )
        }
        self.office = office
        self.version = Self.version(of: office)
    }

    /// Opens a document.
    ///
    /// `Batch=true` stops LibreOffice from asking anything (a password, a filter's options): it fails instead.
    ///
    /// - Parameter path: the document, whose extension tells LibreOffice its type.
    /// - Returns: the document, which the caller owns.
    /// - Throws: ``LibreOfficeError`` (`.load`) with LibreOffice's message.
    func load(_ path: FilePath) throws(LibreOfficeError) -> LibreOfficeDocument {
        guard let document = chute_lok_document_load(self.office, Self.fileURL(path), "Batch=true") else {
            throw LibreOfficeError(code: .load, function: "documentLoad", message: self.lastError())
        }
        return LibreOfficeDocument(takingOwnershipOf: document, office: self)
    }

    /// LibreOffice's last error message, or a placeholder when it has none.
    func lastError() -> String {
        guard let message = chute_lok_get_error(self.office) else { return "LibreOffice gave no reason" }
        defer { chute_lok_free_error(self.office, message) }
        let text = String(cString: message)
        return text.isEmpty ? "LibreOffice gave no reason" : text
    }

    /// A `file://` URL for `path`, its characters percent-encoded as LibreOffice expects.
    static func fileURL(_ path: FilePath) -> String {
        URL(fileURLWithPath: path.string).absoluteString
    }

    /// `ProductName ProductVersion ProductExtension` from the JSON that `getVersionInfo` returns.
    private static func version(of office: UnsafeMutablePointer<LibreOfficeKit>) -> String {
        guard let info = chute_lok_version_info(office) else { return "LibreOffice" }
        defer { chute_lok_free_error(office, info) }
        let data = Data(String(cString: info).utf8)
        guard let fields = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            return "LibreOffice"
        }
        let name = fields["ProductName"] as? String ?? "LibreOffice"
        let version = (fields["ProductVersion"] as? String ?? "") + (fields["ProductExtension"] as? String ?? "")
        return version.isEmpty ? name : "\(name) \(version)"
    }
}

/// One open LibreOffice document. The corresponding C functions are `documentLoadWithOptions` and `destroy`.
struct LibreOfficeDocument: ~Copyable {
    /// What LibreOffice opened the document as. The corresponding C type is `LibreOfficeKitDocumentType`.
    enum Kind: String {
        case text, spreadsheet, presentation, drawing, other
    }

    private let document: UnsafeMutablePointer<LibreOfficeKitDocument>
    private let office: LibreOffice

    init(takingOwnershipOf document: UnsafeMutablePointer<LibreOfficeKitDocument>, office: LibreOffice) {
        self.document = document
        self.office = office
    }

    deinit {
        chute_lok_document_destroy(self.document)
    }

    /// What LibreOffice opened the document as. The corresponding C function is `getDocumentType`.
    var kind: Kind {
        // The values of `LibreOfficeKitDocumentType` (`LOK_DOCTYPE_TEXT` …), which LibreOfficeKitEnums.h declares
        // only for its unstable API.
        switch chute_lok_document_type(self.document) {
        case 0: .text
        case 1: .spreadsheet
        case 2: .presentation
        case 3: .drawing
        default: .other
        }
    }

    /// Writes the document to `path` in `format`. The corresponding C function is `saveAs`.
    ///
    /// - Parameters:
    ///   - path: the file to write (LibreOffice replaces it).
    ///   - format: LibreOfficeKit's name of the format, its usual extension (`pdf`, `docx`, `txt`); LibreOffice
    ///     picks the export filter of the document's kind.
    ///   - filterOptions: the filter's options, if any.
    /// - Throws: ``LibreOfficeError`` (`.save`) with LibreOffice's message.
    func save(to path: FilePath, format: String, filterOptions: String? = nil) throws(LibreOfficeError) {
        guard chute_lok_document_save_as(self.document, LibreOffice.fileURL(path), format, filterOptions) != 0 else {
            throw LibreOfficeError(code: .save, function: "saveAs", message: self.office.lastError())
        }
    }
}
