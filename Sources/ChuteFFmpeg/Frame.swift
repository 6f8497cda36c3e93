import CFFmpeg

/// Owns one `AVFrame`, reused for many frames: each consumer unreferences the data it was given.
///
/// The corresponding C functions are `av_frame_alloc` and `av_frame_free`.
struct Frame: ~Copyable {
    /// The frame, for the C calls that fill or take it.
    let pointer: UnsafeMutablePointer<AVFrame>

    /// Allocates an empty frame.
    ///
    /// - Throws: ``FFmpegError`` when memory runs out.
    init() throws(FFmpegError) {
        guard let pointer = av_frame_alloc() else {
            throw FFmpegError(.decode, "av_frame_alloc", status: chute_averror(ENOMEM))
        }
        self.pointer = pointer
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = self.pointer
        av_frame_free(&pointer)
    }

    /// Drops the frame's data, keeping the frame for reuse. The corresponding C function is `av_frame_unref`.
    func unref() {
        av_frame_unref(self.pointer)
    }
}
