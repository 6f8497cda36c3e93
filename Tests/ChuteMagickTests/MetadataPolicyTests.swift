import ChuteApp
import ChuteCatalog
import ChuteCore
import ChuteMagick
import ChuteTestSupport
import Foundation
import SystemPackage
import Testing

/// The image engine under each metadata policy: the lossless path for JPEG, PNG and WebP kept in their format, and
/// ImageMagick's path for other conversions.
@Suite(.timeLimit(.minutes(2)))
struct MetadataPolicyTests {
    /// Converts `input` to `format` under `policy`.
    private static func convert(
        _ input: FilePath,
        to format: String,
        output: FilePath,
        policy: MetadataPolicy,
        options: ConversionOptions = ConversionOptions()
    ) throws -> ConversionReport {
        let request = ConversionRequest(
            jobID: "test",
            engine: .image,
            input: input,
            output: output,
            format: try #require(Engines.registry.format(named: format)),
            options: options
        )
        return try ImageEngine().convert(request, metadata: policy) { _ in }
    }

    /// Every value `exiftool` reads from the file, as one text.
    private static func allTags(_ path: FilePath) throws -> String {
        try CommandLineTool.run(["exiftool", "-a", "-G1", "-s", "-b", "-j", path.string]).standardOutput
    }

    @Test func aRotatedJPEGIsTurnedInItsDCTBlocks() throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.jpg")
        let output = directory.appending("out.jpg")
        let upright = directory.appending("upright.png")
        // 4:2:0 has 16x16 blocks; rotating by 270° moves the right edge (208 is whole blocks), not the bottom one.
        try MetadataFixtures.makeJPEG(at: input, size: "208x120", sampling: "2x2", orientation: 8)
        try CommandLineTool.run(["convert", input.string, "-auto-orient", upright.string])

        let report = try Self.convert(input, to: "jpg", output: output, policy: .strip)

        #expect(report.details["pixels"] == "rotated losslessly (orientation 8)")
        #expect(report.details["outputWidth"] == "120" && report.details["outputHeight"] == "208")
        #expect(report.details["metadataRemoved"] == "exif,gps,thumbnail,xmp,iptc,comment")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Orientation"] == nil)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(try Fixtures.identify(output).width == 120)
        #expect(try MetadataFixtures.psnr(output, upright) > 50)
    }

    @Test func locationKeepsAJPEGsPixelsAndOrientation() throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.jpg")
        let output = directory.appending("out.jpg")
        try MetadataFixtures.makeJPEG(at: input, orientation: 6)

        let report = try Self.convert(input, to: "jpg", output: output, policy: .location)

        #expect(report.details["pixels"] == "unchanged")
        #expect(report.details["metadataRemoved"] == "gps,xmp,iptcLocation")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["IFD0:Orientation"] == "6" && tags["IFD0:Make"] == "Canon")
        #expect(try MetadataFixtures.decodedMD5(of: output) == MetadataFixtures.decodedMD5(of: input))
    }

    @Test func aMalformedJPEGIsACorruptInput() throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.jpg")
        try MetadataFixtures.makeJPEG(at: input)
        var bytes = try MetadataFixtures.read(input)
        bytes.removeLast(2)  // no end marker: ImageMagick would fill in, the segment walk refuses
        try MetadataFixtures.write(bytes, to: input)

        #expect(throws: ConversionFailure.self) {
            try Self.convert(input, to: "jpg", output: directory.appending("out.jpg"), policy: .strip)
        }
        #expect(!FileManager.default.fileExists(atPath: directory.appending("out.jpg").string))
    }

    @Test(arguments: ["png", "webp"])
    func aRotatedPNGOrWebPIsReencodedUpright(format: String) throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.\(format)")
        let output = directory.appending("out.\(format)")
        if format == "png" {
            try MetadataFixtures.makePNG(at: input, orientation: 6)
        } else {
            try MetadataFixtures.makeWebP(at: input, orientation: 6)
        }

        let report = try Self.convert(input, to: format, output: output, policy: .strip)

        #expect(report.details["pixels"] == "reencoded (orientation 6 in a \(format) file)")
        let info = try Fixtures.identify(output)
        #expect(info.width == 80 && info.height == 100)
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(
            Set(tags.keys.compactMap { $0.split(separator: ":").first.map(String.init) })
                .isDisjoint(with: MetadataFixtures.metadataGroups)
        )
        let text = try Self.allTags(output)
        for secret in MetadataFixtures.secrets { #expect(!text.contains(secret), "\(secret)") }
    }

    @Test(arguments: ["png", "webp", "tiff"])
    func stripThroughImageMagickKeepsOnlyTheProfile(format: String) throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.jpg")
        let output = directory.appending("out.\(format)")
        try MetadataFixtures.makeJPEG(at: input, orientation: 6)

        let report = try Self.convert(input, to: format, output: output, policy: .strip)

        #expect(report.details["metadataRemoved"] == "exif,gps,thumbnail,xmp,iptc,comment")
        #expect(report.details["pixels"] == nil)
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let text = try Self.allTags(output)
        for secret in MetadataFixtures.secrets { #expect(!text.contains(secret), "\(secret)") }
        let info = try Fixtures.identify(output)
        #expect(info.width == 120 && info.height == 200)
    }

    @Test(arguments: ["png", "webp", "jpg"])
    func locationThroughImageMagickKeepsTheRest(format: String) throws {
        let directory = try ChuteTestSupport.TemporaryDirectory(prefix: "magick")
        defer { directory.remove() }
        let input = directory.appending("in.jpg")
        let output = directory.appending("out.\(format)")
        try MetadataFixtures.makeJPEG(at: input, orientation: 6)

        // A width makes even JPEG to JPEG go through ImageMagick.
        let report = try Self.convert(
            input,
            to: format,
            output: output,
            policy: .location,
            options: ConversionOptions(["width": 100])
        )

        #expect(report.details["metadataRemoved"] == "gps,xmp,iptcLocation")
        #expect(try MetadataFixtures.gpsTags(of: output) == "")
        let text = try Self.allTags(output)
        for secret in ["48.856", "2.3522", "Paris", "France"] { #expect(!text.contains(secret), "\(secret)") }
        #expect(text.contains("Canon"))
        let tags = try MetadataFixtures.tags(of: output)
        #expect(tags["ICC_Profile:ProfileDescription"] == "Compatible with Adobe RGB (1998)")
        if format == "jpg" {
            #expect(tags["IPTC:Keywords"] == "holiday")
        }
    }
}
