import CFFmpeg
import ChuteCatalog

/// Counts one stream's packets, decoded frames and decoding errors, and judges them at the end.
///
/// Damaged packets are common in real files (a cut recording, a bad block) and decoders conceal them, so a few are
/// only a warning. An audio or video stream that yields no frame at all, or fails on more than half of its packets,
/// fails the job: its output would look complete without being so. A subtitle stream in that state only warns: an
/// empty subtitle track (a forced-only track of a film without foreign dialogue) is common, and the picture and sound
/// are whole without it.
struct DecodeTally {
    /// The input stream's index and codec, for messages.
    let streamIndex: Int
    let codecName: String
    /// Whether the output is incomplete without this stream's content (audio and video), or merely lacks a track.
    let isEssential: Bool
    var packets = 0
    var frames = 0
    var errors = 0
    /// FFmpeg's message for the first error.
    var firstError: String?

    init(streamIndex: Int, codecName: String, isEssential: Bool = true) {
        self.streamIndex = streamIndex
        self.codecName = codecName
        self.isEssential = isEssential
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
    /// - Returns: a warning when some packets failed (or, for a stream that is not essential, when it is empty or
    ///   undecodable), `nil` when none did.
    /// - Throws: ``FFmpegError`` with code `decode` when an essential stream had no packet, no frame came out, or
    ///   most packets failed.
    func verdict() throws(FFmpegError) -> String? {
        let stream = "stream #\(self.streamIndex) (\(self.codecName))"
        let reason = self.firstError.map { "; first error: \($0)" } ?? ""
        let failure: FFmpegError? =
            if self.frames == 0 && self.packets == 0 {
                FFmpegError(
                    .decode,
                    "av_read_frame",
                    detail: "the input holds no readable packet of \(stream): it is damaged, or a variant of "
                        + "\(self.codecName) this FFmpeg does not read"
                )
            } else if self.frames == 0 {
                FFmpegError(.decode, "avcodec_receive_frame", detail: "no frame of \(stream) could be decoded\(reason)")
            } else if self.errors * 2 > self.packets {
                FFmpegError(
                    .decode,
                    "avcodec_send_packet",
                    detail: "\(self.errors) of \(self.packets) packets of \(stream) could not be decoded\(reason)"
                )
            } else {
                nil
            }
        if let failure {
            guard self.isEssential else { return "\(failure.description); that track is empty in the output" }
            throw failure
        }
        guard self.errors > 0 else { return nil }
        return "\(self.errors) of \(self.packets) packets of \(stream) could not be decoded and were concealed\(reason)"
    }
}
