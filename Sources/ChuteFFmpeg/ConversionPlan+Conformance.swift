import CFFmpeg
import ChuteCatalog

/// The one shape every clip of a group is re-encoded to when the clips differ, so that their packets join into one
/// stream of one codec configuration (``MediaEngine/concatenate(_:request:progress:)``): a picture size, a frame
/// rate, and the sound's sample rate and channels.
struct Conformance {
    /// The coded picture size, upright (display matrices are applied to the pixels).
    var width: Int
    var height: Int
    var frameRate: AVRational
    /// The sound's, unless the rule or the target sets them.
    var sampleRate: Int
    var channels: Int
    /// The deepest sound's bits per sample (over 16: the joined FLAC is 24-bit), so that every clip's FLAC has the
    /// same sample format: a FLAC decoder refuses a change of depth within a stream.
    var soundBits: Int
    /// The colour description every clip's encoder is given (the first clip's), so that the clips' H.264 headers, and
    /// with them their packets, agree. A clip described otherwise keeps its pixels: a small colour shift, not a
    /// broken stream. `nil` for sound alone.
    var colour: VideoColour?
}

/// A video stream's colour description, as its encoder writes it into the stream's headers.
struct VideoColour: Equatable {
    var primaries: AVColorPrimaries
    var transfer: AVColorTransferCharacteristic
    var space: AVColorSpace
    var range: AVColorRange
    var chromaLocation: AVChromaLocation

    /// The description an encode of `parameters` writes: the source's, full-range ("J") pixel formats becoming the
    /// limited range they are converted to.
    init(_ parameters: AVCodecParameters) {
        self.primaries = parameters.color_primaries
        self.transfer = parameters.color_trc
        self.space = parameters.color_space
        let fullRange = [AV_PIX_FMT_YUVJ420P, AV_PIX_FMT_YUVJ422P, AV_PIX_FMT_YUVJ444P].map(\.rawValue)
        self.range = fullRange.contains(parameters.format) ? AVCOL_RANGE_MPEG : parameters.color_range
        self.chromaLocation = parameters.chroma_location
    }
}

extension ConversionPlan {
    /// Makes every kept video and audio stream a re-encode to `shape`: the picture turned upright, fitted into the
    /// size and centred on black, at the frame rate (frames repeated or dropped, as FFmpeg's `fps` filter does); the
    /// sound at the rate and channels, unless the rule or the target set its own. Subtitles and cover pictures are
    /// left out: the clips' join holds one picture and one sound stream.
    mutating func conform(to shape: Conformance) {
        if let video = self.video {
            let matrix = video.source.displayMatrix
            let width = shape.width
            let height = shape.height
            let filters =
                (matrix?.rotationFilters ?? []) + [
                    "scale=w=\(width):h=\(height):force_original_aspect_ratio=decrease:flags=bicubic",
                    "pad=w=\(width):h=\(height):x=(ow-iw)/2:y=(oh-ih)/2",
                    "setsar=1",
                    "fps=fps=\(shape.frameRate.num)/\(shape.frameRate.den)",
                    "format=pix_fmts=\(String(cString: av_get_pix_fmt_name(video.codec.pixelFormat)))",
                ]
            self.video = Video(
                source: video.source,
                isCopy: false,
                codec: video.codec,
                width: width,
                height: height,
                filters: filters,
                maxFrameRate: nil,
                keptMatrix: nil,
                frameRates: video.frameRates,
                colour: shape.colour
            )
        }
        self.audio = self.audio.map { audio in
            Audio(
                source: audio.source,
                isCopy: false,
                // The clips' sound is FLAC (``MediaEngine``'s join), of one depth.
                encoding: audio.encoding.codecID == AV_CODEC_ID_FLAC
                    ? AudioEncoding(codec: .flac, sourceBits: shape.soundBits, pcmCodecs: self.profile.pcmCodecs)
                    : audio.encoding,
                bitRate: audio.bitRate,
                sampleRate: audio.sampleRate ?? shape.sampleRate,
                channels: audio.channels ?? shape.channels,
                containerRates: audio.containerRates,
                filters: audio.filters
            )
        }
        self.subtitles = []
        self.covers = []
    }
}
