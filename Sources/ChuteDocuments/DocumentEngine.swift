import ChuteCatalog
import ChuteCore
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// The document engine: converts word-processing documents, web pages and plain text between PDF, DOCX, ODT, RTF,
/// HTML and TXT, and spreadsheets and presentations to PDF, through LibreOffice loaded in the worker process
/// (``LibreOffice``).
///
/// LibreOffice is loaded once, when the worker starts, and stays loaded for every job the worker runs: a job pays
/// for opening and writing its document only. The worker is replaced after `settings.workerJobs` jobs, which bounds
/// what LibreOffice leaks, and killed with its job past `jobTimeout`; LibreOffice never runs outside it.
///
/// A job reads its input through the one descriptor ``InputOpening`` gives, by its content (``MediaType``), and
/// copies it into the worker's own folder under a name with the type's extension: LibreOffice then opens a file
/// that no one else can change or replace, and writes its lock file beside that copy rather than in the watched
/// folder. The output is written there too, checked (``DocumentVerifier``), and copied into the request's output,
/// created exclusively and flushed to storage.
///
/// - Important: ``convert(_:progress:)`` blocks in LibreOffice; call it on the worker's own thread, always the same
///   one.
package struct DocumentEngine: ConversionEngine {
    package let kind = EngineKind.document
    /// LibreOffice, or why it could not be loaded (every job then fails with `engineUnavailable`).
    private let office: Result<LibreOffice, LibreOfficeError>
    /// This worker's folder: LibreOffice's profile, and each job's copies.
    private let folder: FilePath
    /// What the installed fonts cover, to warn about text drawn without a font; `nil` when fontconfig cannot say.
    private let coverage: GlyphCoverage?

    /// Where Debian's packages install LibreOffice.
    static let installation: FilePath = "/usr/lib/libreoffice/program"

    /// Loads LibreOffice, with a profile of this worker's own in a folder `chute-documents-PID` of the temporary
    /// folder; such folders of workers that no longer run (killed with their job) are removed first.
    package init() {
        let temporary = FilePath(FileManager.default.temporaryDirectory.path)
        Self.removeFoldersOfEndedWorkers(in: temporary)
        let folder = temporary.appending("chute-documents-\(getpid())")
        try? FileManager.default.removeItem(atPath: folder.string)
        try? FileManager.default.createDirectory(
            atPath: folder.string,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        self.folder = folder
        self.coverage = GlyphCoverage()
        self.office = Result { () throws(LibreOfficeError) in
            try LibreOffice(installation: Self.installation, profile: folder.appending("profile"))
        }
    }

    /// `LibreOffice` and its version.
    package var libraries: [String: String] {
        switch self.office {
        case .success(let office): ["LibreOffice": office.version]
        case .failure: [:]
        }
    }

    package func convert(
        _ request: ConversionRequest,
        progress: (JobProgress) -> Void
    ) throws(ConversionFailure) -> ConversionReport {
        let office: LibreOffice
        switch self.office {
        case .success(let loaded): office = loaded
        case .failure(let error): throw error.failure
        }
        let job = self.folder.appending("job")
        try? FileManager.default.removeItem(atPath: job.string)
        guard mkdir(job.string, 0o700) == 0 else {
            throw ConversionFailure(.internalError, "cannot make the job's folder: \(Errno(rawValue: errno))")
        }
        defer { try? FileManager.default.removeItem(atPath: job.string) }

        let (type, copy, encoding, decrypted) = try Self.copyInput(of: request, into: job)
        guard let target = DocumentFormat(name: request.format.name) else {
            throw ConversionFailure(.internalError, "the document engine does not write \(request.format.name)")
        }
        guard let source = DocumentFormat.Source(type) else {
            throw ConversionFailure(
                .unsupportedInput,
                "the document engine reads word-processing documents, web pages, plain text, spreadsheets and "
                    + "presentations, not \(type.rawValue)"
            )
        }
        guard source.writes(target) else {
            throw ConversionFailure(
                .unsupportedInput,
                "a \(source.kind) (\(type.rawValue)) converts only to pdf, not to \(target.rawValue)"
            )
        }
        progress(JobProgress(fraction: 0.1))
        let written = job.appending("output.\(target.rawValue)")
        let kind: LibreOfficeDocument.Kind
        do throws(LibreOfficeError) {
            let document = try office.load(copy)
            kind = document.kind
            progress(JobProgress(fraction: 0.5))
            try document.save(to: written, format: target.rawValue)
        } catch {
            throw error.failure
        }
        progress(JobProgress(fraction: 0.9))
        var report = ConversionReport(outputBytes: 0)
        report.details["inputType"] = type.rawValue
        report.details["documentKind"] = kind.rawValue
        if decrypted {
            report.details["encryption"] = "removed (opened with the rule's password)"
        }
        if let encoding {
            report.details["textEncoding"] = encoding.rawValue
            if encoding == .windows1252 {
                report.warnings.append("the text is not UTF-8: it was read as Windows-1252 (Latin-1)")
            }
        }
        if target == .txt {
            try Self.removeByteOrderMark(from: written)
        }
        let facts = try DocumentVerifier.verify(written, as: target)
        if let pages = facts.pages {
            report.details["pages"] = "\(pages)"
        }
        if target == .pdf, let coverage = self.coverage,
            let bytes = FileManager.default.contents(atPath: written.string)
        {
            let missing = coverage.missingCharacters(in: Array(bytes))
            if !missing.isEmpty {
                let examples = missing.prefix(5).map { "U+\(String($0.value, radix: 16, uppercase: true)) \($0)" }
                let drawn =
                    missing.count == 1
                    ? "character had no font and is drawn as an empty box"
                    : "characters had no font and are drawn as empty boxes"
                report.warnings.append(
                    "\(missing.count) \(drawn) "
                        + "(\(examples.joined(separator: ", "))\(missing.count > 5 ? ", …" : "")): no installed font "
                        + "covers them; install one that does (Debian's fonts-noto-core covers most scripts)"
                )
            }
        }
        report.outputBytes = try Self.copy(written, to: request.output)
        progress(JobProgress(fraction: 1))
        return report
    }

    /// Copies the input, through the descriptor ``InputOpening`` gives, into `folder` under a name with the
    /// extension of its sniffed type. Plain text is copied as UTF-8 whatever its encoding
    /// (``TextEncoding/detect(_:isPrefix:)``), with a byte order mark, by which LibreOffice reads it as UTF-8.
    ///
    /// A DOCX, XLSX or PPTX encrypted with a password is decrypted with the rule's `password` first
    /// (``decryptedPackage(of:password:)``): LibreOffice gets the document's own package.
    ///
    /// - Returns: the type, the copy's path, the encoding of plain text, and whether the input was decrypted.
    /// - Throws: `unsupportedInput` when the content is not recognised, saying what it is
    ///   (``ConversionFailure/unexpectedContent(_:expected:)``); `corruptInput` when the file is empty, or plain text
    ///   named as another kind of document (`.odt`, `.docx`); `encrypted` for a password-protected document without
    ///   the password that opens it; what ``InputOpening/open(_:)`` throws; `internalError` when the copy fails.
    private static func copyInput(
        of request: ConversionRequest,
        into folder: FilePath
    ) throws(ConversionFailure) -> (MediaType, FilePath, TextEncoding?, Bool) {
        let (descriptor, size) = try InputOpening.open(request)
        defer { close(descriptor) }
        guard size > 0 else { throw ConversionFailure(.corruptInput, "empty file") }
        let input = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        var bytes: Data
        do {
            bytes = try input.readToEnd() ?? Data()
        } catch {
            throw ConversionFailure(.internalError, "cannot read input: \(error)")
        }
        // An Office Open XML file whose kind shows only after a large first member (a thumbnail) is told by all of
        // its members.
        guard
            var type = MediaType.sniff(bytes.prefix(MediaType.headerLength))
                ?? MediaType.officeDocument(inZip: Array(bytes))
        else {
            throw ConversionFailure.unexpectedContent(
                bytes,
                expected: "a word-processing document, web page, plain text, spreadsheet or presentation"
            )
        }
        var decrypted = false
        if type == .doc,
            let package = try Self.decryptedPackage(
                of: Array(bytes),
                password: request.options[CommonOptions.password]
            )
        {
            guard let inner = MediaType.officeDocument(inZip: package) else {
                throw ConversionFailure(
                    .corruptInput,
                    "the decrypted document is no DOCX, XLSX or PPTX package: it is damaged"
                )
            }
            (bytes, type, decrypted) = (Data(package), inner, true)
        }
        var encoding: TextEncoding?
        if type == .text, let named = request.input.extension.flatMap(MediaType.usual(forExtension:)),
            named != .text, named != .html
        {
            // Plain text under an office document's name (`.odt`, `.docx`): a damaged or mislabelled file that
            // would otherwise become pages of whatever it says.
            throw ConversionFailure(
                .corruptInput,
                "the file is named .\(request.input.extension ?? "") but holds plain text, not \(named.rawValue): it "
                    + "is damaged or was renamed"
            )
        }
        if type == .text {
            // The header was text; the whole file may not be (UTF-8 broken further on): it is judged again.
            let whole = Array(bytes)
            guard let detected = TextEncoding.detect(whole[...], isPrefix: false),
                let text = detected.decode(whole.dropFirst(detected.byteOrderMark.count))
            else {
                throw ConversionFailure(
                    .unsupportedInput,
                    "the text is neither UTF-8, UTF-16 with a byte order mark, nor Windows-1252 (Latin-1) throughout: "
                        + "not UTF-8: convert it with iconv"
                )
            }
            encoding = detected
            bytes = Data(TextEncoding.utf8WithBOM.byteOrderMark + Array(text.utf8))
        }
        let copy = folder.appending("input.\(DocumentFormat.Source.fileExtension(of: type))")
        guard FileManager.default.createFile(atPath: copy.string, contents: bytes) else {
            throw ConversionFailure(.internalError, "cannot copy the input into the worker's folder")
        }
        return (type, copy, encoding, decrypted)
    }

    /// The ZIP package of a DOCX, XLSX or PPTX encrypted with a password, decrypted with `password`; `nil` for an
    /// OLE2 file that is not one (a Word 97 document, which LibreOffice reads itself).
    ///
    /// Word, Excel and PowerPoint store an encrypted DOCX, XLSX or PPTX as the streams `EncryptionInfo` and
    /// `EncryptedPackage` of an OLE2 compound file (see ``OfficeEncryption``).
    ///
    /// - Throws: `encrypted` without a password, or with one that does not open the document; `unsupportedInput`
    ///   for an encryption Chute cannot undo; `corruptInput` for a damaged file.
    private static func decryptedPackage(of bytes: [UInt8], password: String?) throws(ConversionFailure) -> [UInt8]? {
        let file: CompoundFile
        do {
            file = try CompoundFile(bytes)
        } catch {
            // LibreOffice says what is wrong with a damaged Word 97 file.
            return nil
        }
        guard file.hasStream(named: "EncryptedPackage") else { return nil }
        guard let password else {
            throw ConversionFailure(
                .encrypted,
                "the document is password-protected (an encrypted DOCX, XLSX or PPTX): give its password as the "
                    + "rule's `password`"
            )
        }
        let info: [UInt8]?
        let package: [UInt8]?
        do throws(CompoundFile.Malformed) {
            (info, package) = (try file.stream(named: "EncryptionInfo"), try file.stream(named: "EncryptedPackage"))
        } catch {
            throw ConversionFailure(.corruptInput, "the encrypted document is damaged: \(error)")
        }
        guard let info, let package else {
            throw ConversionFailure(.corruptInput, "the encrypted document has no EncryptionInfo stream")
        }
        return try OfficeEncryption(info: info).decrypt(package, password: password)
    }

    /// Removes the UTF-8 byte order mark that LibreOffice's text export writes first: plain text is written
    /// without one, as every Unix tool expects.
    ///
    /// - Throws: `outputFailed` when the file cannot be read or written again.
    private static func removeByteOrderMark(from written: FilePath) throws(ConversionFailure) {
        guard let bytes = FileManager.default.contents(atPath: written.string) else {
            throw ConversionFailure(.outputFailed, "LibreOffice wrote no output")
        }
        let mark = TextEncoding.utf8WithBOM.byteOrderMark
        guard bytes.starts(with: mark) else { return }
        guard FileManager.default.createFile(atPath: written.string, contents: bytes.dropFirst(mark.count)) else {
            throw ConversionFailure(.outputFailed, "cannot rewrite LibreOffice's text without its byte order mark")
        }
    }

    /// Copies LibreOffice's output into `output`, created exclusively, and flushes it to storage.
    ///
    /// - Returns: its size in bytes.
    /// - Throws: `outputFailed`, `diskFull` or `limitExceeded` (`maxOutputSize`); the output is removed first.
    private static func copy(_ written: FilePath, to output: FilePath) throws(ConversionFailure) -> Int64 {
        guard let bytes = FileManager.default.contents(atPath: written.string) else {
            throw ConversionFailure(.outputFailed, "LibreOffice wrote no output")
        }
        try TemporaryFile.writeOutput(bytes, at: output)
        return Int64(bytes.count)
    }

    /// Removes the `chute-documents-PID` folders of workers that have ended: a worker killed with its job leaves
    /// its profile behind.
    private static func removeFoldersOfEndedWorkers(in temporary: FilePath) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: temporary.string)) ?? []
        for name in names where name.hasPrefix("chute-documents-") {
            guard let pid = pid_t(name.dropFirst("chute-documents-".count)), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: temporary.appending(name).string)
            }
        }
    }
}
