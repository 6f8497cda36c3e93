import CFFmpeg
import ChuteCatalog
import ChuteCore

/// The video encoder's settings for a rule: codec, quality or bitrate, speed.
///
/// Defaults follow each encoder's common practice: x264 `medium` at CRF 23 (the `ffmpeg` CLI's), x265 `medium` at
/// CRF 28, VP9 at CRF 32 in constant-quality mode with row multithreading and `cpu-used` 2, AV1 at CRF 32 (SVT-AV1
/// preset 8, or libaom with `cpu-used` 6). The older codecs, which have no constant-quality mode, get a fixed
/// quantizer (``VideoCodec/quantizer``); MPEG-1 and MPEG-2 also get the DVD's decoder buffer (224 KiB) and peak rate
/// (9.8 Mb/s), which MPEG program streams declare.
struct VideoEncoderSettings {
    /// The constant-quality level, or `nil` when a bitrate is set or the codec has none.
    let crf: Int?
    /// The fixed quantizer of an older codec, or `nil`.
    let quantizer: Int?
    /// Whether the quantizer grows with the picture's area (RealVideo): FFmpeg's RealMedia muxer takes packets of at
    /// most 64 kB, which a 320x576 frame at quantizer 2 already exceeds (80 kB, measured).
    let scalesQuantizer: Bool
    /// Whether the codec is MPEG-1 or MPEG-2 video, which gets a decoder buffer size and peak rate.
    let isMPEGVideo: Bool
    /// The average bitrate in bits per second, or `nil` for constant quality.
    let bitRate: Int?
    let preset: Preset
    /// The codec tag the output stream gets: `hvc1` for HEVC in MP4 and MOV, which Apple's players require.
    let codecTag: UInt32?
    /// The pass of a two-pass encode (`maxFileSize`), which sets the bitrate; `nil` for one pass.
    let pass: EncodingPass?

    init(codec: VideoCodec, options: ConversionOptions, format: TargetFormat, pass: EncodingPass? = nil) {
        self.pass = pass
        self.bitRate = pass?.bitRate ?? options[MediaOptions.videoBitrate]
        let constantQuality = self.bitRate == nil
        self.crf = constantQuality ? options[MediaOptions.crf] ?? codec.defaultCRF : nil
        self.quantizer = constantQuality ? codec.quantizer : nil
        self.isMPEGVideo = codec == .mpeg1video || codec == .mpeg2video
        self.scalesQuantizer = codec == .rv10
        self.preset = options[MediaOptions.preset] ?? .medium
        let tag = "hvc1".utf8.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.codecTag = codec == .hevc && (format.name == "mp4" || format.name == "mov") ? tag : nil
    }

    /// The encoder's own options for these settings.
    func options(for encoder: UnsafePointer<AVCodec>) -> [(String, String)] {
        var options: [(String, String)] = []
        switch String(cString: encoder.pointee.name) {
        case "libx264":
            options = [("preset", self.preset.rawValue)]
        case "libx265":
            // x265 prints its own banner and statistics to standard error unless told not to.
            options = [("preset", self.preset.rawValue), ("x265-params", "log-level=error")]
        case "libvpx-vp9":
            options = [("deadline", "good"), ("cpu-used", "2"), ("row-mt", "1")]
        case "libsvtav1":
            options = [("preset", "8")]
        case "libaom-av1":
            options = [("cpu-used", "6"), ("row-mt", "1")]
        default:
            options = []
        }
        if let crf = self.crf {
            options.append(("crf", String(crf)))
        }
        if let pass = self.pass {
            // libx264 reads and writes its statistics itself, in the file named by its `stats` option (as the CLI's
            // `-passlogfile` sets it), rather than through `stats_out` and `stats_in`.
            options.append(("stats", pass.statsFile))
        }
        return options
    }

    /// Sets the bitrate (0 makes VP9 and libaom encode at constant quality), or the fixed quantizer, MPEG video's
    /// decoder buffer, and the pass.
    func configure(_ context: UnsafeMutablePointer<AVCodecContext>) {
        context.pointee.bit_rate = Int64(self.bitRate ?? 0)
        if var quantizer = self.quantizer {
            if self.scalesQuantizer {
                // At quantizer 3 a RealVideo frame takes up to a third of a byte per pixel (62 kB for 320x576,
                // measured); a coarser quantizer shrinks it about in proportion.
                let pixels = Int(context.pointee.width) * Int(context.pointee.height)
                quantizer = min(31, max(quantizer, (pixels + 39_999) / 40_000))
            }
            context.pointee.flags |= AV_CODEC_FLAG_QSCALE
            context.pointee.global_quality = Int32(quantizer) * FF_QP2LAMBDA
        }
        if self.isMPEGVideo {
            // Without a buffer size the MPEG muxers warn that the file may not suit players; FFmpeg wants a peak
            // rate with it. A rule's bitrate above the DVD's raises the peak.
            context.pointee.rc_buffer_size = 1_835_008
            context.pointee.rc_max_rate = max(9_800_000, 2 * Int64(self.bitRate ?? 0))
        }
        switch self.pass {
        case .first?: context.pointee.flags |= Int32(AV_CODEC_FLAG_PASS1)
        case .second?: context.pointee.flags |= Int32(AV_CODEC_FLAG_PASS2)
        case nil: break
        }
    }
}
