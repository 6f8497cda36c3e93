import ChuteCore
import Testing

@testable import ChuteCatalog
@testable import ChuteFFmpeg

/// The bounding-box arithmetic, which must agree with FFmpeg's `scale=-2:H` so that outputs match the CLI's.
@Suite struct ConversionPlanTests {
    @Test(
        arguments: [
            // (source, box width, box height, upscale) → result
            ((1920, 1080), nil, 720, false, (1280, 720)),
            ((1280, 960), nil, 720, false, (960, 720)),
            ((568, 320), nil, 240, false, (426, 240)),
            ((320, 568), nil, 240, false, (136, 240)),
            ((1920, 1080), 1000, 1000, false, (1000, 562)),
            ((1080, 1920), 1000, 1000, false, (562, 1000)),
            ((640, 360), nil, 720, false, (640, 360)),
            ((640, 360), nil, 720, true, (1280, 720)),
            ((641, 361), nil, nil, false, (640, 360)),
            ((1920, 1080), nil, 721, false, (1280, 720)),
        ] as [((Int, Int), Int?, Int?, Bool, (Int, Int))]
    )
    func boxKeepsAspectInEvenNumbers(
        source: (Int, Int),
        width: Int?,
        height: Int?,
        upscale: Bool,
        expected: (Int, Int)
    ) {
        let fitted = ConversionPlan.fit((source.0, source.1), width: width, height: height, upscale: upscale)
        #expect(fitted.width == expected.0 && fitted.height == expected.1, "\(fitted)")
    }

    @Test func aPictureThatFitsNeedsNoScaling() {
        #expect(ConversionPlan.fits((640, 360), width: nil, height: 720, upscale: false))
        #expect(ConversionPlan.fits((640, 360), width: nil, height: nil, upscale: true))
        #expect(!ConversionPlan.fits((640, 360), width: nil, height: 720, upscale: true))
        #expect(!ConversionPlan.fits((1920, 1080), width: nil, height: 720, upscale: false))
    }

    /// An option that did not say what it does to a copied stream would force a re-encode of every file its rule
    /// matches; one that said it wrongly would be ignored on a remux. Every option must be in the table.
    @Test func everyMediaOptionSaysWhetherAStreamMayBeCopied() {
        let keys = (Engines.video.options + Engines.audio.options).map(\.key)
        let undeclared = keys.filter { MediaOptions.streamCopy[$0] == nil }
        #expect(undeclared.isEmpty, "options without a stream-copy declaration: \(undeclared)")
        let stale = MediaOptions.streamCopy.keys.filter { !keys.contains($0) }
        #expect(stale.isEmpty, "declarations of options the media engines do not take: \(stale)")
    }

    @Test func durationsAgreeWithinHalfASecondOrTwoPercent() {
        #expect(TimeExtent.agree(3.0, 3.4))
        #expect(!TimeExtent.agree(3.0, 3.6))
        #expect(TimeExtent.agree(100, 101.9))
        #expect(!TimeExtent.agree(100, 103))
    }
}
