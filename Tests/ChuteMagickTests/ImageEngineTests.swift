import ChuteApp
import ChuteCore
import Foundation
import SystemPackage
import Testing

@testable import ChuteCatalog
@testable import ChuteMagick

@Suite struct ImageEngineTests {
    @Test func pngBecomesJPEGAtDefaultQuality() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        let output = directory.file("out.jpg")
        try MagickTool.convert(["-size", "320x240", "gradient:red-blue", input.string])

        let report = try Conversion.run(input, to: "jpg", output: output)

        #expect(try MagickTool.identify("%m %Q %wx%h", output) == "JPEG 85 320x240")
        #expect(report.outputBytes == Int64(try output.readBytes().count))
        #expect(report.details["inputFormat"] == "PNG")
        #expect(report.details["inputWidth"] == "320")
        #expect(report.details["inputHeight"] == "240")
        #expect(report.details["outputWidth"] == "320")
        #expect(report.details["outputHeight"] == "240")
    }

    @Test func qualityFromTheRuleIsUsed() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        let output = directory.file("out.jpg")
        try MagickTool.convert(["-size", "64x64", "gradient:", input.string])

        _ = try Conversion.run(input, to: "jpg", output: output, options: ConversionOptions(["quality": 60]))

        #expect(try MagickTool.identify("%Q", output) == "60")
    }

    @Test func heicBecomesJPEG() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.heic")
        let output = directory.file("out.jpg")
        try MagickTool.convert(["-size", "320x240", "gradient:red-blue", input.string])
        let header = try input.readBytes()
        try #require(MediaType.sniff(header) == .heif, "the fixture is not HEIF: \(header.prefix(16))")
        try #require(try MagickTool.identify("%m", input) == "HEIC")

        let report = try Conversion.run(input, to: "jpg", output: output, options: ConversionOptions(["quality": 0.85]))

        #expect(try MagickTool.identify("%m %Q %wx%h", output) == "JPEG 85 320x240")
        #expect(report.details["inputFormat"] == "HEIC")
    }

    @Test func exifOrientationIsAppliedToThePixels() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.jpg")
        let output = directory.file("out.jpg")
        let plain = directory.file("plain.jpg")
        try MagickTool.convert(["-size", "300x200", "gradient:", plain.string])
        try input.write(FixtureBytes.addingEXIF(orientation: 6, to: try plain.readBytes()))
        try #require(try MagickTool.identify("%wx%h %[orientation]", input) == "300x200 RightTop")

        let report = try Conversion.run(input, to: "jpg", output: output)

        let (size, orientation) = try Self.sizeAndOrientation(of: output)
        #expect(size == "200x300")
        #expect(orientation == "TopLeft" || orientation == "Undefined")
        #expect(report.details["inputWidth"] == "300")
        #expect(report.details["outputWidth"] == "200")
        #expect(report.details["outputHeight"] == "300")
    }

    @Test(arguments: [
        (ConversionOptions(["width": 1000]), "1000x750"),
        (ConversionOptions(["height": 600]), "800x600"),
        (ConversionOptions(["width": 1000, "height": 500]), "667x500"),
        (ConversionOptions(["width": 4000, "height": 3000]), "4000x3000"),
    ])
    func boundingBoxScalesDownKeepingTheAspectRatio(options: ConversionOptions, expected: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.jpg")
        let output = directory.file("out.jpg")
        try MagickTool.convert(["-size", "4000x3000", "gradient:", input.string])

        let report = try Conversion.run(input, to: "jpg", output: output, options: options)

        #expect(try MagickTool.identify("%wx%h", output) == expected)
        #expect("\(report.details["outputWidth"] ?? "")x\(report.details["outputHeight"] ?? "")" == expected)
        #expect(report.details["inputWidth"] == "4000")
        #expect(report.details["inputHeight"] == "3000")
    }

    @Test func smallImagesAreNotUpscaled() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        let output = directory.file("out.png")
        try MagickTool.convert(["-size", "100x80", "gradient:", input.string])

        _ = try Conversion.run(
            input,
            to: "png",
            output: output,
            options: ConversionOptions(["width": 1000, "height": 1000])
        )

        #expect(try MagickTool.identify("%wx%h", output) == "100x80")
    }

    @Test(arguments: [
        ("jpg", "JPEG"), ("png", "PNG"), ("webp", "WEBP"), ("heic", "HEIC"), ("tiff", "TIFF"), ("gif", "GIF"),
        ("bmp", "BMP"),
    ])
    func everyImageTargetIsWrittenInItsFormat(target: String, coder: String) throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.jpg")
        let output = directory.file("out.\(target)")
        try MagickTool.convert(["-size", "96x64", "gradient:red-blue", input.string])

        let report = try Conversion.run(input, to: target, output: output)

        #expect(try MagickTool.identify("%m %wx%h", output) == "\(coder) 96x64")
        #expect(report.outputBytes > 0)
    }

    @Test func stripRemovesEXIF() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.jpg")
        let plain = directory.file("plain.jpg")
        try MagickTool.convert(["-size", "64x48", "gradient:", plain.string])
        try input.write(FixtureBytes.addingEXIF(make: "Test", to: try plain.readBytes()))
        try #require(try MagickTool.identify("%[exif:Make]", input) == "Test")

        let kept = directory.file("kept.jpg")
        _ = try Conversion.run(input, to: "jpg", output: kept)
        let stripped = directory.file("stripped.jpg")
        _ = try Conversion.run(input, to: "jpg", output: stripped, options: ConversionOptions(["strip": true]))

        #expect(try MagickTool.identify("%[exif:Make]", kept) == "Test")
        #expect(try MagickTool.identify("%[exif:Make]", stripped) == "")
        #expect(try MagickTool.identify("%[profiles]", stripped) == "")
    }

    @Test func stripKeepsTheICCProfile() throws {
        let directory = try TemporaryDirectory()
        let plain = directory.file("plain.jpg")
        try MagickTool.convert(["-size", "64x48", "gradient:red-blue", plain.string])
        let input = directory.file("in.jpg")
        try input.write(
            FixtureBytes.addingEXIF(make: "Test", to: FixtureBytes.addingICCProfile(to: try plain.readBytes()))
        )
        try #require(try MagickTool.identify("%[profiles]", input) == "exif,icc")
        let output = directory.file("out.jpg")

        _ = try Conversion.run(input, to: "jpg", output: output, options: ConversionOptions(["strip": true]))

        #expect(try MagickTool.identify("%[profiles]", output) == "icc")
        let profile = directory.file("out.icc")
        try MagickTool.convert([output.string, profile.string])
        #expect(try profile.readBytes() == FixtureBytes.iccProfile)
    }

    @Test func transparencyIsFlattenedOntoWhiteForJPEG() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        let output = directory.file("out.jpg")
        try MagickTool.convert([
            "-size", "32x32", "xc:none", "-fill", "red", "-draw", "rectangle 16,0 31,31", input.string,
        ])

        _ = try Conversion.run(input, to: "jpg", output: output)

        #expect(try MagickTool.identify("%[pixel:p{2,2}]", output) == "srgb(255,255,255)")
        #expect(try MagickTool.identify("%[channels]", output) == "srgb")
    }

    @Test func animatedGIFKeepsItsFramesInWebPAndOnlyTheFirstInJPEG() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.gif")
        try MagickTool.convert(["-delay", "10", "-size", "48x32", "xc:red", "xc:lime", "xc:blue", input.string])

        let animation = directory.file("out.webp")
        let report = try Conversion.run(input, to: "webp", output: animation, options: ConversionOptions(["width": 24]))
        let still = directory.file("out.jpg")
        let stillReport = try Conversion.run(input, to: "jpg", output: still)

        #expect(
            try MagickTool.identify("%m %wx%h\n", animation, allFrames: true) == "WEBP 24x16\nWEBP 24x16\nWEBP 24x16\n"
        )
        #expect(report.details["inputFrames"] == "3")
        #expect(report.details["outputFrames"] == "3")
        #expect(report.details["frames"] == "all 3")
        #expect(try MagickTool.identify("%m %wx%h\n", still, allFrames: true) == "JPEG 48x32\n")
        #expect(stillReport.details["frames"] == "first of 3")
    }

    @Test func rawRGBIsReadInTheDeclaredLayout() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.png")
        try MagickTool.convert(["-size", "30x20", "gradient:red-blue", source.string])
        let input = directory.file("in.rgb")
        try MagickTool.convert([source.string, "-depth", "16", "RGB:\(input.string)"])
        let output = directory.file("out.png")

        let layout = try RawPixelLayout(samples: .rgb, width: 30, height: 20, depth: 16)
        let report = try Conversion.run(input, to: "png", output: output, rawInput: layout)

        #expect(try input.readBytes().count == layout.byteCount)
        #expect(report.details["inputFormat"] == "RGB")
        #expect(try MagickTool.identify("%m %wx%h", output) == "PNG 30x20")
        #expect(try MagickTool.rmse(source, output) == 0)
    }

    @Test func rawInputOfAnotherSizeThanDeclaredIsRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.rgb")
        try MagickTool.convert(["-size", "30x20", "gradient:", "-depth", "8", "RGB:\(input.string)"])
        let output = directory.file("out.png")

        let layout = try RawPixelLayout(samples: .rgb, width: 30, height: 21, depth: 8)
        let failure = Conversion.failure(input, to: "png", output: output, rawInput: layout)

        #expect(failure?.code == .corruptInput)
        #expect(failure?.message.contains("has 1800 bytes, and raw RGB 30x21 at 8 bits takes 1890") == true)
        #expect(!output.exists)
    }

    @Test func headerlessContentWithoutALayoutNamesWhatARuleMustDeclare() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.rgb")
        try MagickTool.convert(["-size", "30x20", "xc:#102030", "-depth", "8", "RGB:\(input.string)"])

        let failure = Conversion.failure(input, to: "png", output: directory.file("out.png"))

        #expect(failure?.code == .unsupportedInput)
        #expect(failure?.message.contains("declares their size and depth") == true)
    }

    @Test func yuvOfAnOddSizeIsRefusedWithTheReason() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        try MagickTool.convert(["-size", "97x61", "gradient:", input.string])
        let output = directory.file("out.yuv")

        let failure = Conversion.failure(input, to: "yuv", output: output)

        #expect(failure?.code == .unsupportedInput)
        #expect(
            failure?.message == "cannot write YUV: YUV 4:2:0 needs an even width and height, and the image is 97x61"
        )
        #expect(!output.exists)
    }

    @Test func rawLayoutsOutsideTheirRangesAreRefused() {
        #expect(throws: RawPixelLayout.Problem.self) {
            try RawPixelLayout(samples: .rgb, width: 0, height: 4, depth: 8)
        }
        #expect(throws: RawPixelLayout.Problem.self) {
            try RawPixelLayout(samples: .rgb, width: 4, height: 4, depth: 12)
        }
        #expect(throws: RawPixelLayout.Problem.self) {
            try RawPixelLayout(samples: .yuv, width: 5, height: 4, depth: 8)
        }
        #expect((try? RawPixelLayout(samples: .yuv, width: 6, height: 4, depth: 16))?.byteCount == (24 + 2 * 6) * 2)
    }

    @Test func tgaStoredBottomUpIsReadUpright() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.png")
        try MagickTool.convert(["-size", "40x30", "gradient:red-blue", "-depth", "8", source.string])
        let input = directory.file("in.tga")
        try MagickTool.convert([source.string, input.string])
        try #require(try MagickTool.identify("%[orientation]", input) == "BottomLeft")
        let output = directory.file("out.png")

        _ = try Conversion.run(input, to: "png", output: output)

        #expect(try MagickTool.rmse(source, output) == 0)
    }

    @Test func tooManyFramesIsALimit() throws {
        let directory = try TemporaryDirectory()
        // Multi-page TIFF: ImageMagick writes 100 pages in milliseconds, a 100-frame GIF takes seconds.
        let accepted = directory.file("100.tiff")
        try MagickTool.convert(["-size", "4x4", "xc:red", "-duplicate", "99", accepted.string])
        let refused = directory.file("101.tiff")
        try MagickTool.convert(["-size", "4x4", "xc:red", "-duplicate", "100", refused.string])

        let report = try Conversion.run(accepted, to: "tiff", output: directory.file("out100.tiff"))
        let failure = Conversion.failure(refused, to: "tiff", output: directory.file("out101.tiff"))

        #expect(report.details["outputFrames"] == "100")
        #expect(failure?.code == .limitExceeded)
        #expect(failure?.message.contains("at most 100 frames") == true)
        #expect(!directory.file("out101.tiff").exists)
    }

    @Test func imagesWiderThanThePolicyAreALimit() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("wide.bmp")
        try MagickTool.convert(["-size", "16x16", "xc:red", input.string])
        // Claim 20000x16 in the BITMAPINFOHEADER (width at byte 18, little-endian): the header alone must be refused.
        var bytes = try input.readBytes()
        bytes.replaceSubrange(18..<22, with: [0x20, 0x4E, 0x00, 0x00])
        try input.write(bytes)

        let failure = Conversion.failure(input, to: "jpg", output: directory.file("out.jpg"))

        #expect(failure?.code == .limitExceeded)
        #expect(failure?.message.contains("width or height exceeds limit") == true)
    }

    @Test(arguments: [(20000, 16), (16, 20000), (100_000, 100_000), (12000, 12000)])
    func pngDeclaringMoreThanThePolicyIsALimitFromItsHeader(width: Int, height: Int) throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("declared.png")
        try MagickTool.convert(["-size", "16x16", "xc:red", input.string])
        // Rewrite the IHDR's width and height (bytes 16 to 23, big-endian) and its CRC: only the header lies. libpng
        // refuses sizes beyond the policy without a word, which ImageMagick passes on as no reason at all.
        var bytes = try input.readBytes()
        for (offset, value) in [(16, width), (20, height)] {
            let bigEndian = (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
            bytes.replaceSubrange(offset..<(offset + 4), with: bigEndian)
        }
        let crc = Self.crc32(bytes[12..<29])
        bytes.replaceSubrange(29..<33, with: (0..<4).map { UInt8(truncatingIfNeeded: crc >> (24 - 8 * $0)) })
        try input.write(bytes)

        let failure = Conversion.failure(input, to: "jpg", output: directory.file("out.jpg"))

        #expect(failure?.code == .limitExceeded, "\(String(describing: failure))")
        #expect(failure?.message.contains("image is \(width)x\(height)") == true, "\(String(describing: failure))")
        #expect(!directory.file("out.jpg").exists)
    }

    @Test func truncatedJPEGIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let whole = directory.file("whole.jpg")
        try MagickTool.convert(["-size", "640x480", "gradient:red-blue", "-quality", "95", whole.string])
        let bytes = try whole.readBytes()
        let input = directory.file("truncated.jpg")
        try input.write(Array(bytes.prefix(bytes.count * 40 / 100)))
        let output = directory.file("out.jpg")

        let failure = Conversion.failure(input, to: "jpg", output: output)

        #expect(failure?.code == .corruptInput)
        #expect(failure?.message.contains("Premature end of JPEG file") == true, "\(String(describing: failure))")
        #expect(!output.exists)
    }

    @Test func randomBytesNamedJPEGAreRefused() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("noise.jpg")
        var generator = SystemRandomNumberGenerator()
        try input.write((0..<1024).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let output = directory.file("out.jpg")

        let failure = Conversion.failure(input, to: "jpg", output: output)

        let code = try #require(failure?.code)
        #expect([.corruptInput, .unsupportedInput].contains(code))
        #expect(!output.exists)
    }

    @Test func imageMagickMessageIsPassedOn() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.gif")
        // A GIF header and logical screen descriptor announcing a 0x0 image, then nothing.
        try input.write(Array("GIF89a".utf8) + [0, 0, 0, 0, 0, 0, 0, 0x2C] + [UInt8](repeating: 0, count: 9))
        let output = directory.file("out.png")

        let failure = Conversion.failure(input, to: "png", output: output)

        #expect(failure?.code == .corruptInput)
        #expect(
            failure?.message.contains("MagickPingImageBlob failed: negative or zero image size") == true,
            "\(String(describing: failure))"
        )
        #expect(!output.exists)
    }

    @Test func svgNamedPNGIsUnsupported() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("picture.png")
        try input.write(Array(#"<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>"#.utf8))
        let output = directory.file("out.jpg")

        let failure = Conversion.failure(input, to: "jpg", output: output)

        #expect(failure?.code == .unsupportedInput)
        #expect(failure?.message.contains("svg") == true)
        #expect(!output.exists)
    }

    @Test func emptyFileIsCorrupt() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("empty.jpg")
        try input.write([])

        let failure = Conversion.failure(input, to: "jpg", output: directory.file("out.jpg"))

        #expect(failure == ConversionFailure(.corruptInput, "empty file"))
    }

    @Test func existingOutputIsLeftAlone() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        try MagickTool.convert(["-size", "32x32", "gradient:", input.string])
        let output = directory.file("out.jpg")
        let existing = Array("not mine".utf8)
        try output.write(existing)

        let failure = Conversion.failure(input, to: "jpg", output: output)

        #expect(failure?.code == .outputFailed)
        #expect(try output.readBytes() == existing)
    }

    @Test func symbolicLinkAtTheOutputIsNotFollowed() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        try MagickTool.convert(["-size", "32x32", "gradient:", input.string])
        let target = directory.file("victim")
        try target.write(Array("precious".utf8))
        let output = directory.file("out.jpg")
        try FileManager.default.createSymbolicLink(atPath: output.string, withDestinationPath: target.string)

        let failure = Conversion.failure(input, to: "jpg", output: output)

        #expect(failure?.code == .outputFailed)
        #expect(try target.readBytes() == Array("precious".utf8))
    }

    @Test(.timeLimit(.minutes(1))) func fifoIsRefusedWithoutBlocking() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("x.jpg")
        try #require(mkfifo(input.string, 0o600) == 0)
        let output = directory.file("out.jpg")

        let failure = Conversion.failure(input, to: "jpg", output: output)

        #expect(failure == ConversionFailure(.unsupportedInput, "not a regular file"))
        #expect(!output.exists)
    }

    @Test func symbolicLinkInputIsRefused() throws {
        let directory = try TemporaryDirectory()
        let real = directory.file("real.png")
        try MagickTool.convert(["-size", "32x32", "gradient:", real.string])
        let input = directory.file("link.png")
        try FileManager.default.createSymbolicLink(atPath: input.string, withDestinationPath: real.string)

        let failure = Conversion.failure(input, to: "jpg", output: directory.file("out.jpg"))

        #expect(failure?.code == .unsupportedInput)
    }

    @Test func librariesNameImageMagickAndItsDelegates() {
        let libraries = ImageEngine().libraries

        #expect(libraries["ImageMagick"]?.hasPrefix("ImageMagick 6.") == true)
        #expect(libraries["libjpeg"] != nil)
        #expect(libraries["libheif"] != nil)
        #expect(ImageEngine().kind == .image)
    }

    @Test func progressRisesToOne() throws {
        let directory = try TemporaryDirectory()
        let input = directory.file("in.png")
        try MagickTool.convert(["-size", "32x32", "gradient:", input.string])
        let format = try #require(Engines.registry.format(named: "webp"))
        let request = ConversionRequest(
            jobID: "progress",
            engine: .image,
            input: input,
            output: directory.file("out.webp"),
            format: format,
            options: ConversionOptions()
        )
        var fractions: [Double] = []

        _ = try ImageEngine(threadsPerJob: 2).convert(request) { fractions.append($0.fraction) }

        #expect(fractions == fractions.sorted())
        #expect(fractions.first.map { $0 > 0 } == true)
        #expect(fractions.last == 1)
    }

    /// The size and EXIF orientation `identify` reports.
    /// The CRC-32 that PNG chunks carry.
    private static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func sizeAndOrientation(of path: FilePath) throws -> (String, String) {
        let fields = try MagickTool.identify("%wx%h %[orientation]", path).split(separator: " ")
        return (String(fields.first ?? ""), String(fields.dropFirst().first ?? ""))
    }
}

/// The order of an image conversion's steps does not depend on the order of the rule's keys.
@Suite struct ImageOperationPlanTests {
    @Test func stepsFollowTheStagesWhateverTheKeyOrder() throws {
        let jpg = try #require(Engines.registry.format(named: "jpg"))
        let png = try #require(Engines.registry.format(named: "png"))
        let options: ConversionOptions = ["quality": 70, "height": 600]

        #expect(
            ImageOperation.plan(options, format: jpg, metadata: .strip, orientation: 6) == [
                .orient(exif: 6), .makeSRGB, .fit(PictureBox(["height": 600])), .metadata(.strip),
                .flatten(onto: "white"), .quality(70),
            ]
        )
        #expect(
            ImageOperation.plan(["quality": 0.5, "colorspace": "keep"], format: png, metadata: .keep) == [
                .orient(exif: nil)
            ]
        )
        #expect(
            ImageOperation.plan([:], format: jpg, metadata: .keep) == [
                .orient(exif: nil), .makeSRGB, .flatten(onto: "white"), .quality(85),
            ]
        )
    }
}
