import CFFmpeg
import ChuteCore

/// A libav* call that failed, or a check of Chute's own on what the libraries produced.
///
/// The status is read right after the call, in ``check(_:_:_:)``; the message comes from `av_strerror`, and
/// ``detail`` keeps the last error FFmpeg logged on the way, which often says more ("moov atom not found").
struct FFmpegError: Error, CustomStringConvertible {
    /// The stage of a conversion that failed.
    enum Code: Sendable {
        /// Opening or probing the input: the container is damaged, truncated or not a format Chute reads.
        case openInput
        /// The input has no stream of a kind that the target needs, or none that can be decoded.
        case unsupportedStream
        /// Reading or decoding the input's packets.
        case decode
        /// The input is larger than Chute's or the rule's limits (pixels per frame, frames, duration).
        case limitExceeded
        /// Building or running a filter graph (scaling, rotation, resampling).
        case filter
        /// The encoder that the target needs is not part of this FFmpeg.
        case encoderUnavailable
        /// Opening or running an encoder.
        case encode
        /// Creating or writing the output file.
        case writeOutput
        /// The written output does not decode, or does not last as long as the input.
        case verify
    }

    /// The stage that failed.
    var code: Code
    /// The C function that failed, or the check that did.
    var function: String
    /// The function's `AVERROR` status; `0` for Chute's own checks.
    var status: Int32
    /// More about the failure: FFmpeg's last logged error for the call, or the explanation of Chute's check.
    var detail: String?

    init(_ code: Code, _ function: String, status: Int32 = 0, detail: String? = nil) {
        self.code = code
        self.function = function
        self.status = status
        self.detail = detail
    }

    var description: String {
        guard self.status != 0 else { return self.detail ?? "\(self.function) failed" }
        var text = "\(self.function) failed: \(Self.message(for: self.status)) (\(self.status))"
        if let detail = self.detail, !detail.isEmpty {
            text += ": \(detail)"
        }
        return text
    }

    /// Throws when `status` is negative, with FFmpeg's last logged error as the detail.
    ///
    /// - Parameters:
    ///   - status: what the C function returned.
    ///   - code: the stage, for the failure's class.
    ///   - function: the C function's name.
    /// - Returns: `status`, when it is not an error.
    @discardableResult
    static func check(_ status: Int32, _ code: Code, _ function: String) throws(FFmpegError) -> Int32 {
        guard status < 0 else { return status }
        throw FFmpegError(code, function, status: status, detail: FFmpegLog.takeLastError())
    }

    /// FFmpeg's words for an `AVERROR` status. The corresponding C function is `av_strerror`.
    static func message(for status: Int32) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(AV_ERROR_MAX_STRING_SIZE)) { buffer in
            guard let start = buffer.baseAddress, av_strerror(status, start, buffer.count) == 0 else {
                return "unknown error"
            }
            return String(cString: start)
        }
    }

    /// ``plainReason`` followed by FFmpeg's own message in parentheses, `the file is cut short: … (FFmpeg:
    /// avformat_open_input failed: …)`; without a plain reason, `context` and the message.
    private func explained(or context: String) -> String {
        self.plainReason.map { "\($0) (FFmpeg: \(self))" } ?? "\(context): \(self)"
    }

    /// The failure as a worker reports it.
    ///
    /// A damaged or truncated input is `corruptInput`, said in plain words first where ``plainReason`` knows the
    /// case; a container or codec Chute does not read is
    /// `unsupportedInput`; a frame beyond the pixel limit, or memory running out, is `limitExceeded`; a missing encoder is
    /// `engineUnavailable`; a failed write or verification is `outputFailed` (`diskFull` for `ENOSPC`); the rest is
    /// `internalError`.
    var conversionFailure: ConversionFailure {
        // An allocation refused at any stage: the job's memoryLimit (RLIMIT_DATA) or the machine's memory.
        if self.status == chute_averror(ENOMEM) {
            return ConversionFailure(.limitExceeded, "out of memory (the job's memoryLimit or the machine's): \(self)")
        }
        switch self.code {
        case .openInput:
            if self.status == chute_averror(ENOENT) {
                return ConversionFailure(.inputChanged, "the input disappeared: \(self)")
            }
            if self.status == chute_averror_demuxer_not_found() {
                return ConversionFailure(.unsupportedInput, "cannot open the input: \(self)")
            }
            return ConversionFailure(.corruptInput, self.explained(or: "cannot open the input"))
        case .unsupportedStream:
            return ConversionFailure(.unsupportedInput, "\(self)")
        case .decode:
            return ConversionFailure(.corruptInput, self.explained(or: "cannot decode the input"))
        case .limitExceeded:
            return ConversionFailure(.limitExceeded, "\(self)")
        case .filter:
            return ConversionFailure(.internalError, "cannot process the decoded media: \(self)")
        case .encoderUnavailable:
            return ConversionFailure(.engineUnavailable, "\(self)")
        case .encode:
            return ConversionFailure(.internalError, "cannot encode the output: \(self)")
        case .writeOutput:
            if self.status == chute_averror(ENOSPC) || self.status == chute_averror(EDQUOT) {
                return ConversionFailure(.diskFull, "disk full: cannot write the output: \(self)")
            }
            if self.status == chute_averror(EFBIG) {
                return ConversionFailure(.limitExceeded, "the output grew beyond the job's maxOutputSize: \(self)")
            }
            return ConversionFailure(.outputFailed, "cannot write the output: \(self)")
        case .verify:
            return ConversionFailure(.outputFailed, "the written output does not check out: \(self)")
        }
    }
}
