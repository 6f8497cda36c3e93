import CFFmpeg

/// Counts one stream's packets, decoded frames and decoding errors, and judges them at the end.
///
/// Damaged packets are common in real files (a cut recording, a bad block) and decoders conceal them, so a few are
/// only a warning. A stream that yields no frame at all, or fails on more than half of its packets, fails the job:
/// its output would look complete without being so.
struct DecodeTally {
    /// The input stream's index and codec, for messages.
    let streamIndex: Int
    let codecName: String
    var packets = 0
    var frames = 0
    var errors = 0
    /// FFmpeg's message for the first error.
    var firstError: String?

    init(streamIndex: Int, codecName: String) {
        self.streamIndex = streamIndex
        self.codecName = codecName
    }

    /// Records a decoding error.
    mutating func record(_ error: FFmpegError) {
        self.errors += 1
        if self.firstError == nil {
            self.firstError = error.description
        }
    }

    /// Judges the stream once it is fully decoded.
    ///
    /// - Returns: a warning when some packets failed, `nil` when none did.
    /// - Throws: ``FFmpegError`` with code `decode` when the stream had no packet, no frame came out, or most
    ///   packets failed.
    func verdict() throws(FFmpegError) -> String? {
        let stream = "stream #\(self.streamIndex) (\(self.codecName))"
        let reason = self.firstError.map { "; first error: \($0)" } ?? ""
        guard self.frames > 0 else {
            if self.packets == 0 {
                throw FFmpegError(
                    .decode,
                    "av_read_frame",
                    detail: "the input holds no readable packet of \(stream): it is damaged, or a variant of "
                        + "\(self.codecName) this FFmpeg does not read"
                )
            }
            throw FFmpegError(
                .decode,
                "avcodec_receive_frame",
                detail: "no frame of \(stream) could be decoded\(reason)"
            )
        }
        guard self.errors * 2 <= self.packets else {
            throw FFmpegError(
                .decode,
                "avcodec_send_packet",
                detail: "\(self.errors) of \(self.packets) packets of \(stream) could not be decoded\(reason)"
            )
        }
        guard self.errors > 0 else { return nil }
        return "\(self.errors) of \(self.packets) packets of \(stream) could not be decoded and were concealed\(reason)"
    }
}
