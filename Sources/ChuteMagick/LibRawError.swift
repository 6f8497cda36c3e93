import CLibRaw
import ChuteCore

/// A LibRaw call that failed, with LibRaw's own explanation.
///
/// Camera RAW files are decoded with LibRaw directly (``RawProcessor``), not through ImageMagick; this is the
/// error of those calls.
struct LibRawError: Error, CustomStringConvertible {
    /// The C function that failed.
    var function: String
    /// LibRaw's status (`LibRaw_errors`), such as -2 for `LIBRAW_FILE_UNSUPPORTED`.
    var status: Int32
    /// LibRaw's message (`libraw_strerror`), or what its data-error callback reported.
    var message: String

    var description: String {
        "\(self.function) failed: \(self.message) (LibRaw error \(self.status))"
    }

    /// An error with the message that `libraw_strerror` gives for `status`.
    init(function: String, status: Int32) {
        self.function = function
        self.status = status
        // libraw_strerror returns static strings; the text is copied right away all the same.
        self.message = String(cString: libraw_strerror(status))
    }

    /// An error with a message of Chute's own, for a problem LibRaw reports through a callback rather than a status.
    init(function: String, status: Int32, message: String) {
        self.function = function
        self.status = status
        self.message = message
    }

    /// Throws the error of `function` unless `status` is `LIBRAW_SUCCESS`.
    static func check(_ status: Int32, _ function: String) throws(LibRawError) {
        guard status != LIBRAW_SUCCESS.rawValue else { return }
        throw LibRawError(function: function, status: status)
    }

    /// The failure a worker reports: a file LibRaw does not know or that holds no raw image is `unsupportedInput`,
    /// damaged or cut-short data is `corruptInput`, and a file whose raw data would take more memory than allowed is
    /// `limitExceeded`.
    var conversionFailure: ConversionFailure {
        switch self.status {
        case LIBRAW_FILE_UNSUPPORTED.rawValue, LIBRAW_REQUEST_FOR_NONEXISTENT_IMAGE.rawValue,
            LIBRAW_NOT_IMPLEMENTED.rawValue:
            return ConversionFailure(.unsupportedInput, "cannot decode the camera RAW file: \(self)")
        case LIBRAW_UNSUFFICIENT_MEMORY.rawValue, LIBRAW_TOO_BIG.rawValue, LIBRAW_MEMPOOL_OVERFLOW.rawValue:
            return ConversionFailure(.limitExceeded, "the camera RAW file needs more memory than allowed: \(self)")
        default:
            return ConversionFailure(.corruptInput, "cannot decode the camera RAW file: \(self)")
        }
    }
}
