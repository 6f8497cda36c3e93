import ChuteCore
import SystemPackage

/// A failed LibreOfficeKit call, with LibreOffice's own message.
struct LibreOfficeError: Error, CustomStringConvertible {
    enum Code: Sendable {
        /// LibreOffice could not be loaded into the worker.
        case start
        /// The document could not be opened (damaged, encrypted, or of no type LibreOffice recognises).
        case load
        /// The document could not be written in the target format.
        case save
    }

    var code: Code
    /// The LibreOfficeKit call that failed.
    var function: String
    /// LibreOffice's message (`getError`), or what Chute knows when it gave none.
    var message: String

    var description: String { "\(self.function) failed: \(self.message)" }

    /// The job's failure: a document LibreOffice cannot open is the input's fault, the rest the engine's.
    var failure: ConversionFailure {
        switch self.code {
        case .start: ConversionFailure(.engineUnavailable, "cannot start LibreOffice: \(self.description)")
        case .load: ConversionFailure(.corruptInput, "LibreOffice cannot open the document: \(self.description)")
        case .save: ConversionFailure(.outputFailed, "LibreOffice cannot write the document: \(self.description)")
        }
    }
}
