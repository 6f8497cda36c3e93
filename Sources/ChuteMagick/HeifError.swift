import CHeif

/// A libheif call that failed, with libheif's own explanation.
///
/// The image engine decodes HEIF and AVIF through libheif itself (``ImageEngine/decodeHEIF``); this is the error of
/// those calls.
struct HeifError: Error, CustomStringConvertible {
    /// The C function that failed.
    var function: String
    /// libheif's error category (`heif_error_code`), such as 2 for `heif_error_Invalid_input`.
    var code: UInt32
    /// libheif's detailed error (`heif_suberror_code`).
    var subcode: UInt32
    /// libheif's message.
    var message: String

    var description: String {
        "\(self.function) failed: \(self.message) (libheif error \(self.code).\(self.subcode))"
    }

    /// Throws the error of `function` unless `error` says `heif_error_Ok`. libheif's messages are static strings,
    /// so the text is copied right away rather than kept.
    static func check(_ error: heif_error, _ function: String) throws(HeifError) {
        guard error.code != heif_error_Ok else { return }
        throw HeifError(
            function: function,
            code: error.code.rawValue,
            subcode: error.subcode.rawValue,
            message: error.message.map { String(cString: $0) } ?? ""
        )
    }
}
