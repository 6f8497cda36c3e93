import CFFmpeg

extension ConversionPlan {
    /// The filters that tone-map an HDR picture (HLG or PQ, in BT.2020) to SDR BT.709: linear light at a 100-nit
    /// reference white, converted to BT.709 primaries in floating point, compressed by Hable's curve, and given the
    /// BT.709 transfer and matrix in limited range (libavfilter's `zscale`, through zimg, and `tonemap`, as FFmpeg's
    /// documentation describes). The 8-bit encoders Chute writes cannot carry HDR: without this the picture would
    /// look washed out, and the output would keep tags (`arib-std-b67`, `bt2020`) its pixels no longer match.
    static let toneMapFilters = [
        "zscale=transfer=linear:npl=100",
        "format=pix_fmts=gbrpf32le",
        "zscale=primaries=bt709",
        "tonemap=tonemap=hable:desat=0",
        "zscale=transfer=bt709:matrix=bt709:range=tv",
    ]

    /// Whether a video stream's transfer is an HDR one: HLG (`arib-std-b67`) or PQ (`smpte2084`).
    static func isHDR(_ source: SourceStream) -> Bool {
        source.colourTransfer == AVCOL_TRC_ARIB_STD_B67 || source.colourTransfer == AVCOL_TRC_SMPTE2084
    }
}

extension VideoColour {
    /// SDR BT.709 in limited range, the description of a tone-mapped picture, with the source's chroma siting.
    static func standardDynamicRange(chromaLocation: AVChromaLocation) -> VideoColour {
        VideoColour(
            primaries: AVCOL_PRI_BT709,
            transfer: AVCOL_TRC_BT709,
            space: AVCOL_SPC_BT709,
            range: AVCOL_RANGE_MPEG,
            chromaLocation: chromaLocation
        )
    }

    /// A description given field by field.
    init(
        primaries: AVColorPrimaries,
        transfer: AVColorTransferCharacteristic,
        space: AVColorSpace,
        range: AVColorRange,
        chromaLocation: AVChromaLocation
    ) {
        self.primaries = primaries
        self.transfer = transfer
        self.space = space
        self.range = range
        self.chromaLocation = chromaLocation
    }
}
