import ChuteCore
import ChuteTestSupport
import SystemPackage
import Testing

@testable import ChuteMagick

/// HEIF is decoded by libheif itself, not by ImageMagick's HEIC coder: the pixels are those of libheif's own
/// decoder program, `heif-dec`, and a deeper image keeps its depth and its alpha.
@Suite struct HEIFDecodingTests {
    @Test func aHEICHasThePixelsOfLibheifsOwnDecoder() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.png")
        let input = directory.file("in.heic")
        let output = directory.file("out.png")
        let reference = directory.file("reference.png")
        let coder = directory.file("coder.png")
        try MagickTool.convert(["-seed", "7", "-size", "512x384", "plasma:red-blue", "-depth", "8", source.string])
        try CommandLineTool.run(["heif-enc", "-q", "80", "-o", input.string, source.string])
        try CommandLineTool.run(["heif-dec", input.string, reference.string])

        let report = try Conversion.run(input, to: "png", output: output)

        #expect(report.details["inputFormat"] == "HEIC")
        #expect(report.details["inputWidth"] == "512")
        #expect(try MetadataFixtures.psnr(output, reference) == .infinity)
        // ImageMagick's coder, which repeats each pixel pair's chroma, gives other pixels: the check can tell.
        try MagickTool.convert([input.string, coder.string])
        #expect(try MetadataFixtures.psnr(coder, reference) < 60)
    }

    @Test func aTenBitHEIFWithAlphaKeepsItsAlphaAtSixteenBits() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.png")
        let input = directory.file("in.heif")
        let output = directory.file("out.png")
        let reference = directory.file("reference.png")
        try MagickTool.convert([
            "-size", "128x96", "gradient:red-blue", "-alpha", "set", "-channel", "A", "-evaluate", "set", "50%",
            "+channel", "-depth", "16", source.string,
        ])
        try CommandLineTool.run(["heif-enc", "-b", "10", "-o", input.string, source.string])
        try #require(try MagickTool.identify("%z", input) == "10")
        try CommandLineTool.run(["heif-dec", input.string, reference.string])

        _ = try Conversion.run(input, to: "png", output: output)

        #expect(try MagickTool.identify("%[channels] %z %wx%h", output) == "srgba 16 128x96")
        // heif-dec shifts 10-bit samples up by 6 bits, Chute scales them to the full 16-bit range (1023 is 65535):
        // they differ by less than a 10-bit step.
        #expect(try MetadataFixtures.psnr(output, reference) > 60)
        let alpha = try #require(Double(try MagickTool.identify("%[fx:mean.a]", output)))
        #expect(abs(alpha - 0.5) < 0.01)
    }

    @Test func aDamagedHEICIsRefusedWithLibheifsMessage() throws {
        let directory = try TemporaryDirectory()
        let source = directory.file("source.png")
        let whole = directory.file("whole.heic")
        let input = directory.file("in.heic")
        let output = directory.file("out.jpg")
        try MagickTool.convert(["-size", "256x256", "gradient:red-blue", source.string])
        try CommandLineTool.run(["heif-enc", "-o", whole.string, source.string])
        var bytes = try whole.readBytes()
        // The image's coded data is the file's last bytes (in `mdat`): overwritten, the boxes still parse.
        for index in (bytes.count - 200)..<bytes.count { bytes[index] = 0xFF }
        try input.write(bytes)

        let failure = #expect(throws: ConversionFailure.self) {
            try Conversion.run(input, to: "jpg", output: output)
        }

        #expect(failure?.code == .corruptInput)
        #expect(failure?.message.contains("libheif") == true, "\(failure?.message ?? "")")
        #expect(!output.exists)
    }
}
