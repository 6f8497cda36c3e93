import CFFmpeg

/// Owns one `AVBSFContext`: rewrites a copied stream's packets into the form its target container stores, as
/// `ffmpeg -bsf:v h264_mp4toannexb` does.
///
/// The MP4 family and Matroska store H.264 and HEVC as length-prefixed units with their parameter sets in the
/// stream's header (`avcC`, `hvcC`); AVI and MPEG-TS want them as an Annex B byte stream, start codes before each
/// unit and the parameter sets in the stream. libavformat inserts the filter itself only for muxers that declare it
/// (`check_bitstream`): MPEG-TS does, FFmpeg 5.1's AVI muxer does not, and refuses the packets instead ("H.264
/// bitstream malformed, no startcode found"). The same goes for the `ffmpeg` CLI, which adds no filter to an AVI
/// either. Chute adds the filter itself for every muxer that wants Annex B, so that the result does not depend on
/// which muxers check. (AAC in ADTS frames going into the MP4 family, FLV or Matroska is rewritten by those muxers'
/// own check, `aac_adtstoasc`.)
///
/// A class because the transcoder keeps one per copied stream in a dictionary, which cannot hold non-copyable values.
/// The corresponding C functions are `av_bsf_get_by_name`, `av_bsf_alloc`, `av_bsf_init`, `av_bsf_send_packet`,
/// `av_bsf_receive_packet` and `av_bsf_free`.
final class BitstreamFilter {
    /// The muxers that store H.264 and HEVC as an Annex B byte stream, by FFmpeg name.
    static let annexBMuxers: Set<String> = ["avi", "mpegts", "mpeg", "vob", "h264", "hevc"]

    private let context: UnsafeMutablePointer<AVBSFContext>
    /// The filter's name, for the report and messages.
    let name: String

    /// The filter that `parameters` need in a `muxer`, or `nil` when its packets go in as they are.
    ///
    /// H.264 and HEVC are length-prefixed when their header (`extradata`) is a configuration record, which starts
    /// with its version, 1; an Annex B header starts with a start code (`00 00 01` or `00 00 00 01`).
    static func name(for parameters: UnsafePointer<AVCodecParameters>, muxer: String) -> String? {
        guard Self.annexBMuxers.contains(muxer), let extradata = parameters.pointee.extradata,
            parameters.pointee.extradata_size > 0, extradata[0] == 1
        else { return nil }
        switch parameters.pointee.codec_id {
        case AV_CODEC_ID_H264: return "h264_mp4toannexb"
        case AV_CODEC_ID_HEVC: return "hevc_mp4toannexb"
        default: return nil
        }
    }

    /// Sets up the filter `name` for a stream with `parameters` and `timeBase`.
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` when the filter is missing or refuses the stream.
    init(
        name: String,
        parameters: UnsafePointer<AVCodecParameters>,
        timeBase: AVRational
    ) throws(FFmpegError) {
        guard let filter = av_bsf_get_by_name(name) else {
            throw FFmpegError(.writeOutput, "av_bsf_get_by_name", status: chute_averror(ENOSYS), detail: name)
        }
        var allocated: UnsafeMutablePointer<AVBSFContext>?
        try FFmpegError.check(av_bsf_alloc(filter, &allocated), .writeOutput, "av_bsf_alloc")
        guard let context = allocated else {
            throw FFmpegError(.writeOutput, "av_bsf_alloc", status: chute_averror(ENOMEM))
        }
        do {
            try FFmpegError.check(
                avcodec_parameters_copy(context.pointee.par_in, parameters),
                .writeOutput,
                "avcodec_parameters_copy"
            )
            context.pointee.time_base_in = timeBase
            try FFmpegError.check(av_bsf_init(context), .writeOutput, "av_bsf_init")
        } catch {
            var raw: UnsafeMutablePointer<AVBSFContext>? = context
            av_bsf_free(&raw)
            throw error
        }
        self.context = context
        self.name = name
    }

    deinit {
        var raw: UnsafeMutablePointer<AVBSFContext>? = self.context
        av_bsf_free(&raw)
    }

    /// The stream's parameters as the filter gives them out (an Annex B header), for the output stream.
    var outputParameters: UnsafePointer<AVCodecParameters> {
        UnsafePointer(self.context.pointee.par_out)
    }

    /// The time base of the packets the filter gives out.
    var outputTimeBase: AVRational {
        self.context.pointee.time_base_out
    }

    /// Gives the filter a packet, or with `nil` tells it the stream ended; it takes the packet's data and leaves it
    /// empty. Take what comes out with ``receive(into:)``.
    ///
    /// - Throws: ``FFmpegError`` with code `writeOutput` when the filter refuses the packet.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) throws(FFmpegError) {
        try FFmpegError.check(av_bsf_send_packet(self.context, packet), .writeOutput, "av_bsf_send_packet")
    }

    /// Takes the next filtered packet into `packet`.
    ///
    /// - Returns: `false` when the filter needs another packet first, or has given out everything.
    /// - Throws: ``FFmpegError`` with code `writeOutput` when the packet does not filter (an H.264 packet whose
    ///   lengths run past its end, for one).
    func receive(into packet: UnsafeMutablePointer<AVPacket>) throws(FFmpegError) -> Bool {
        let status = av_bsf_receive_packet(self.context, packet)
        if status == chute_averror(EAGAIN) || status == chute_averror_eof() { return false }
        try FFmpegError.check(status, .writeOutput, "av_bsf_receive_packet")
        return true
    }
}
