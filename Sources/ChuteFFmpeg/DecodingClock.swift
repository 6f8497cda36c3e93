import CFFmpeg

/// Fills in the decoding times that some containers leave out (Matroska for video with B-frames), as the
/// `ffmpeg` CLI does: starting one reorder delay before the first presentation time and advancing by each
/// packet's duration; and the presentation times of streams without reordering, which equal them.
struct DecodingClock {
    /// A frame's duration in the stream's time base, for packets without one.
    let frameTicks: Int64
    /// The codec's reorder delay in frames.
    let delay: Int64
    var next: Int64?

    /// The clock of a stream whose packets are copied: a frame at its average (else base) rate, its codec's delay.
    init(_ stream: UnsafePointer<AVStream>) {
        let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
        let frameTicks = rate.num > 0 && rate.den > 0 ? av_rescale_q(1, av_inv_q(rate), stream.pointee.time_base) : 1
        self.frameTicks = max(1, frameTicks)
        self.delay = Int64(stream.pointee.codecpar.pointee.video_delay)
    }

    mutating func fill(_ packet: UnsafeMutablePointer<AVPacket>) {
        let none = chute_nopts_value()
        if packet.pointee.dts == none {
            if let next = self.next {
                packet.pointee.dts = next
            } else if packet.pointee.pts != none {
                packet.pointee.dts = packet.pointee.pts - self.delay * self.frameTicks
            } else {
                // A first packet without any time, such as a cover picture's, starts the stream.
                packet.pointee.dts = 0
            }
        }
        if packet.pointee.dts != none {
            let duration = packet.pointee.duration > 0 ? packet.pointee.duration : self.frameTicks
            self.next = packet.pointee.dts + duration
            // Without reordering, a packet is shown when it is decoded.
            if packet.pointee.pts == none && self.delay == 0 {
                packet.pointee.pts = packet.pointee.dts
            }
        }
    }
}
