import ChuteCatalog
import ChuteCore

/// A format the document engine writes, named as LibreOfficeKit's `saveAs` names it (the usual extension).
enum DocumentFormat: String, CaseIterable {
    case pdf, docx, odt, rtf, html, txt

    init?(name: String) {
        self.init(rawValue: name)
    }

    /// What the engine reads, by the kind of document it is.
    struct Source {
        /// `word-processing document`, `spreadsheet` or `presentation`, for messages.
        var kind: String
        /// Whether it converts to every format, or only to PDF.
        var writesEveryFormat: Bool

        /// The source of a sniffed type, or `nil` for a type the engine does not read (PDF among them).
        init?(_ type: MediaType) {
            switch type {
            case .doc, .docx, .odt, .rtf, .html, .text:
                self.init(kind: "word-processing document", writesEveryFormat: true)
            case .xlsx, .ods:
                self.init(kind: "spreadsheet", writesEveryFormat: false)
            case .pptx, .odp:
                self.init(kind: "presentation", writesEveryFormat: false)
            default:
                return nil
            }
        }

        private init(kind: String, writesEveryFormat: Bool) {
            self.kind = kind
            self.writesEveryFormat = writesEveryFormat
        }

        func writes(_ format: DocumentFormat) -> Bool {
            self.writesEveryFormat || format == .pdf
        }

        /// The extension LibreOffice's type detection expects for a sniffed type.
        static func fileExtension(of type: MediaType) -> String {
            switch type {
            case .text: "txt"
            default: type.rawValue
            }
        }
    }
}
