/// A TurboJPEG call that failed, with libjpeg-turbo's own message.
struct TurboJPEGError: Error, CustomStringConvertible {
    /// Why the transform did not happen.
    enum Code: Sendable {
        /// The transform would have to trim or re-encode the partial blocks at an edge of the image.
        case notPerfect
        /// The library failed: a damaged image, a colour layout it does not transform, memory.
        case failed
    }

    var code: Code
    /// The C function that failed.
    var function: String
    /// The library's message (`tjGetErrorStr2`), or ours for ``Code/notPerfect``.
    var message: String

    var description: String { "\(self.function) failed: \(self.message)" }
}
