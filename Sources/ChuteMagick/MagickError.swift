import CMagickWand
import ChuteCore

/// A MagickWand call that failed, with ImageMagick's own explanation.
///
/// ``Wand`` reads the error right after the failing call (`MagickGetException`, then `MagickRelinquishMemory`) and
/// clears it, so each error describes exactly one call.
struct MagickError: Error, CustomStringConvertible {
    /// The stage of a conversion that failed.
    enum Code: Sendable {
        /// Reading the input's headers or pixels.
        case decode
        /// Changing the decoded image: orientation, size, profiles, alpha.
        case process
        /// Writing the output's bytes.
        case encode
        /// Reading back the encoded output.
        case verify
        /// An operation of the rule does not fit this image (a crop box outside it); no C call failed.
        case geometry
        /// The rule's watermark image cannot be read or decoded.
        case watermark
    }

    /// The stage that failed.
    var code: Code
    /// The C function that failed, or that reported the problem.
    var function: String
    /// ImageMagick's classification, from `WarningException` (300) up to `FatalErrorException` (700); `0` when the
    /// library failed without saying why.
    var severity: UInt32
    /// ImageMagick's message, empty when it gave none.
    var message: String
    /// The ImageMagick coder of a failed read (`TIFF`, `PNG`, …), which names the format and its library in
    /// ``plainReason``; `nil` for the other calls.
    var coder: String?

    var description: String { "\(self.function) failed: \(self.reason)" }

    /// ImageMagick's message, or that it gave none.
    private var reason: String { self.message.isEmpty ? "ImageMagick gave no reason" : self.message }

    /// Whether ImageMagick refused the work because of a resource limit (memory, disk, pixel cache, list length,
    /// width or height).
    var isResourceLimit: Bool {
        // The pixel cache reports the policy's width and height limits as an ImageError, not a ResourceLimitError;
        // its fixed message is the only mark.
        self.severity == ResourceLimitError.rawValue || self.severity == CacheError.rawValue
            || self.severity == ResourceLimitFatalError.rawValue || self.severity == CacheFatalError.rawValue
            || self.message.hasPrefix("width or height exceeds limit")
    }

    /// The failure as a worker reports it.
    ///
    /// Resource limits become `limitExceeded` and name the limits; a decoder that is missing or forbidden by the
    /// policy makes the input `unsupportedInput`; any other decoding problem is `corruptInput`, said in plain words
    /// first where ``plainReason`` knows the case, with the library's own message after it; a failed read-back
    /// of the output is `outputFailed`; the rest is `internalError`.
    ///
    /// - Parameter library: the runtime whose limits a resource failure names.
    func conversionFailure(limits library: MagickLibrary) -> ConversionFailure {
        if self.isResourceLimit {
            let limits =
                "maxImageSide \(library.sideLimit), maxPixels \(library.pixelLimit), the pixel cache within "
                + "memoryLimit, at most \(MagickLibrary.frameLimit) frames"
            return ConversionFailure(.limitExceeded, "image exceeds the job's limits (\(limits)): \(self)")
        }
        switch self.code {
        case .decode:
            // The library's own words stay after the plain sentence: `… (libtiff, through MagickReadImageBlob: …)`.
            let message = self.plainReason.map {
                "\($0.sentence) (\($0.library), through \(self.function): \(self.reason))"
            }
            if self.severity == MissingDelegateError.rawValue || self.severity == PolicyError.rawValue {
                return ConversionFailure(.unsupportedInput, message ?? "cannot decode the input: \(self)")
            }
            return ConversionFailure(.corruptInput, message ?? "cannot decode the input: \(self)")
        case .process:
            return ConversionFailure(.internalError, "cannot process the image: \(self)")
        case .encode:
            return ConversionFailure(.internalError, "cannot encode the output: \(self)")
        case .verify:
            return ConversionFailure(.outputFailed, "the written output does not read back: \(self)")
        case .geometry:
            return ConversionFailure(.unsupportedInput, "the rule does not fit this image: \(self.message)")
        case .watermark:
            return ConversionFailure(.internalError, "the rule's watermark image cannot be used: \(self)")
        }
    }
}
