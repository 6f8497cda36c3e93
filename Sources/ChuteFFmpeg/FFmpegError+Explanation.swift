import CFFmpeg
import ChuteCore

extension FFmpegError {
    /// What a failed call on the input means, in a plain sentence for the common cases: a file cut short (an MP4
    /// without its index, a stream that ends mid-packet), damaged data, or content that is not the format it starts
    /// like; `nil` for other failures, and for Chute's own checks, whose words are plain already.
    var plainReason: String? {
        guard self.status != 0, self.code == .openInput || self.code == .decode else { return nil }
        let detail = (self.detail ?? "").lowercased()
        if detail.contains("moov atom not found") {
            return "the file is cut short or damaged: it has no index (the 'moov' box that an MP4 or MOV writer "
                + "adds at the end, so an upload that stopped early lacks it)"
        }
        if detail.contains("partial file") || detail.contains("could not seek") || detail.contains("invalid frame size")
            || self.status == chute_averror_eof()
        {
            return "the file is cut short: its data ends before its headers say"
        }
        if detail.contains("crc mismatch") || detail.contains("checksum") {
            return "the file is damaged: a checksum in it does not match its data"
        }
        guard self.status == chute_averror_invaliddata() else { return nil }
        return self.code == .openInput
            ? "the file is damaged, or its content is not the format it starts like, whatever its name says"
            : "the file is damaged: its audio or video data cannot be decoded"
    }
}
