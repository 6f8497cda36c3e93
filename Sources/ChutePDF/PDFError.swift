import CQPDF
import ChuteCore

/// A qpdf call that failed, with qpdf's own explanation.
///
/// ``PDFDocument`` reads the error right after the failing call (`qpdf_get_error`, which also clears it), so each
/// error describes exactly one call.
package struct PDFError: Error, CustomStringConvertible {
    /// The stage that failed.
    enum Code: Sendable {
        /// Opening the input: its syntax, cross-reference table or encryption.
        case read
        /// Reading or changing its pages and objects.
        case pages
        /// Writing the output.
        case write
        /// Reading the written output back.
        case verify
        /// Drawing a page as an image (poppler and cairo).
        case render
    }

    /// qpdf's classification of an error. The corresponding C type is `enum qpdf_error_code_e`.
    enum Kind: Sendable {
        /// A wrong or missing password (`qpdf_e_password`).
        case password
        /// Syntax errors or other damage (`qpdf_e_damaged_pdf`), or a broken page tree (`qpdf_e_pages`).
        case damaged
        /// A feature qpdf does not support (`qpdf_e_unsupported`).
        case unsupported
        /// An I/O or memory error (`qpdf_e_system`).
        case system
        /// Any other: type or bounds errors on objects, qpdf's own bugs.
        case other

        init(_ code: qpdf_error_code_e) {
            switch code {
            case qpdf_e_password: self = .password
            case qpdf_e_damaged_pdf, qpdf_e_pages: self = .damaged
            case qpdf_e_unsupported: self = .unsupported
            case qpdf_e_system: self = .system
            default: self = .other
            }
        }
    }

    var code: Code
    var kind: Kind
    /// The C function that failed, or after which qpdf reported the error.
    var function: String
    /// qpdf's message (`qpdf_get_error_full_text`), empty when it gave none.
    var message: String

    package var description: String {
        "\(self.function) failed: \(self.message.isEmpty ? "qpdf gave no reason" : self.message)"
    }

    /// The failure as a worker reports it: a password problem is `encrypted`, damage is `corruptInput`, an
    /// unsupported feature `unsupportedInput`, a failed read-back `outputFailed`, the rest `internalError`.
    var conversionFailure: ConversionFailure {
        switch (self.code, self.kind) {
        case (_, .password):
            return ConversionFailure(
                .encrypted,
                "the PDF is encrypted and the rule's password does not open it: \(self)"
            )
        case (.read, .damaged), (.pages, .damaged):
            return ConversionFailure(.corruptInput, "cannot read the PDF: \(self)")
        case (.read, .unsupported), (.pages, .unsupported):
            return ConversionFailure(.unsupportedInput, "cannot read the PDF: \(self)")
        case (.render, .unsupported):
            return ConversionFailure(.limitExceeded, "cannot render the PDF: \(self)")
        case (.render, .damaged):
            return ConversionFailure(.corruptInput, "cannot render the PDF: \(self)")
        case (.render, _):
            return ConversionFailure(.internalError, "cannot render the PDF: \(self)")
        case (.verify, _):
            return ConversionFailure(.outputFailed, "the written PDF does not read back: \(self)")
        case (.write, _):
            return ConversionFailure(.internalError, "cannot write the PDF: \(self)")
        default:
            return ConversionFailure(.internalError, "cannot process the PDF: \(self)")
        }
    }
}
