import CFFmpeg

/// Owns one `AVPacket`, reused for many packets: each consumer unreferences the data it was given.
///
/// The corresponding C functions are `av_packet_alloc` and `av_packet_free`.
struct Packet: ~Copyable {
    /// The packet, for the C calls that fill or take it.
    let pointer: UnsafeMutablePointer<AVPacket>

    /// Allocates an empty packet.
    ///
    /// - Throws: ``FFmpegError`` when memory runs out.
    init() throws(FFmpegError) {
        guard let pointer = av_packet_alloc() else {
            throw FFmpegError(.decode, "av_packet_alloc", status: chute_averror(ENOMEM))
        }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVPacket>? = self.pointer
        av_packet_free(&pointer)
    }

    /// Drops the packet's data, keeping the packet for reuse. The corresponding C function is `av_packet_unref`.
    func unref() {
        av_packet_unref(self.pointer)
    }
}
